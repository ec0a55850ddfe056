// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * MLIR bytecode (analyze/): a program a traced process hands its runtime's
 * Compile, read in place for its module's name.
 */
#include "fuzz_input.h"
#include "analyze/mlir_bytecode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct byte_source src = byte_source_of_buffer(data, size);
	char name[256], why[256];

	mlir_bytecode_is(data, size);
	mlir_bytecode_module_name(&src, name, sizeof(name), why, sizeof(why));
	return 0;
}
