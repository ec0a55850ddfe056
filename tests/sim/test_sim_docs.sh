#!/usr/bin/env bash
# docs/simulator.md keeps up with the code: every flag tpu-trainer --help
# lists, every plugin option, and every ground-truth record type the code
# writes is documented there.
. tests/harness/test.sh

trainer=$OUTPUT/sim/tpu-trainer
[[ -x $trainer ]] || test_skip "$trainer is not built"
doc=$(cat docs/simulator.md)

flags=$("$trainer" --help | grep -o '^  --[a-z0-9-]*' | tr -d ' ')
[[ $(wc -l <<<"$flags") -ge 30 ]] || fail "--help lists too few flags: $flags"
for f in $flags; do
	contains "$doc" "\`$f" "flag $f documented"
done

opts=$(grep -o '{ "sim_[a-z0-9_]*"' tests/sim/plugin_options.c | grep -o 'sim_[a-z0-9_]*')
[[ -n $opts ]] || fail "no plugin options found in plugin_options.c"
for o in $opts; do
	contains "$doc" "\`$o\`" "option $o documented"
	env=ACCELTRACE_$(tr a-z A-Z <<<"$o")
	contains "$doc" "\`$env\`" "environment $env documented"
done

# Record types are literals given to tl_begin*() or to the helpers that
# call it with their first argument.
types=$( { grep -ho 'tl_begin\(_dev\)\?(&\?[a-z]*, "[a-z0-9_]*"' tests/sim/*.c
	   grep -hoE '(truth_run|truth_transfer|truth_feed|truth_mem|trainer_mem_truth)\("[a-z0-9_]*"' tests/sim/*.c; } |
	grep -o '"[a-z0-9_]*"' | tr -d '"' | sort -u)
[[ $(wc -w <<<"$types") -ge 20 ]] || fail "found too few record types: $types"
for t in $types; do
	contains "$doc" "| \`$t\` |" "truth record $t documented"
done

test_done
