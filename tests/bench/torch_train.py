# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A small real PyTorch training loop for the benchmarks.

An MLP trained on synthetic data stored in real files: each sample is one
file that a Dataset reads with open()/read(), batched by a DataLoader with
two worker processes. Prints one line, "steps_per_s=<float>", measured over
--steps steps after --warmup steps, by the loop itself; on stderr, a
"running" line when the measured steps begin and "done steps=N" when they
end (the benchmark reads a tracer's CPU between the two).

  /usr/bin/python3 torch_train.py --data DIR [--steps N] [--profiler]

--profiler wraps the measured steps in torch.profiler.profile() with its
default activities, the way its users run it.
"""
import argparse
import os
import sys
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

FEATURES = 256
CLASSES = 10
SAMPLES = 2048


class FileDataset(Dataset):
    """One sample per file: FEATURES float32 values, then the label byte."""

    def __init__(self, root):
        self.paths = [os.path.join(root, f"sample-{i:05d}.bin")
                      for i in range(SAMPLES)]

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        with open(self.paths[i], "rb") as f:
            raw = f.read()
        x = torch.frombuffer(bytearray(raw[:FEATURES * 4]), dtype=torch.float32)
        return x, int(raw[FEATURES * 4]) % CLASSES


def make_data(root):
    os.makedirs(root, exist_ok=True)
    g = torch.Generator().manual_seed(1)
    for i in range(SAMPLES):
        path = os.path.join(root, f"sample-{i:05d}.bin")
        if os.path.exists(path):
            continue
        x = torch.randn(FEATURES, generator=g)
        with open(path, "wb") as f:
            f.write(x.numpy().tobytes() + bytes([i % CLASSES]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--profiler", action="store_true")
    args = ap.parse_args()

    torch.manual_seed(0)
    torch.set_num_threads(1)
    make_data(args.data)
    loader = DataLoader(FileDataset(args.data), batch_size=args.batch,
                        shuffle=True, num_workers=2, persistent_workers=True,
                        drop_last=True)
    model = nn.Sequential(nn.Linear(FEATURES, 512), nn.ReLU(),
                          nn.Linear(512, 256), nn.ReLU(),
                          nn.Linear(256, CLASSES))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()

    def batches():
        while True:
            yield from loader

    it = batches()

    def step():
        x, y = next(it)
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()

    for _ in range(args.warmup):
        step()
    print("torch_train: running", file=sys.stderr, flush=True)
    if args.profiler:
        with torch.profiler.profile() as prof:
            t0 = time.monotonic()
            for _ in range(args.steps):
                step()
            secs = time.monotonic() - t0
        del prof
    else:
        t0 = time.monotonic()
        for _ in range(args.steps):
            step()
        secs = time.monotonic() - t0
    print(f"torch_train: done steps={args.steps}", file=sys.stderr, flush=True)
    print(f"steps_per_s={args.steps / secs:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
