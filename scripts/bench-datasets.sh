#!/usr/bin/env bash
# bench-datasets.sh [TEXT_SIZE [SORT_SIZE [JOIN_SIZE]]]: the dataset
# benchmarks of docs/benchmarks.md, each beside its baselines measured in
# the same run. The issue's full sizes are 1g 2g 1g (make bench-datasets-full);
# the defaults suit a small shared machine.
#
#   wordcount  flint (embedded master, 2 one-core executors) vs one Go
#              goroutine with map[string]int vs tr | sort | uniq -c
#   sort       flint sort of 100-byte lines vs GNU sort --parallel=2 -S <the
#              executors' memory>; outputs compared byte for byte
#   join       flint join of two key<TAB>value files: MB/s and peak RSS
#              (the largest process: driver or executor)
set -euo pipefail
TEXT=${1:-64m} SORT=${2:-64m} JOIN=${3:-32m}
MEM=${BENCH_EXECUTOR_MEMORY:-512m}     # per executor
GNU_MEM=${BENCH_GNU_SORT_MEMORY:-1G}   # two executors' worth
cd "$(dirname "$0")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/flint-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
go build -o "$work/flint" ./cmd/flint
benchdata=("$work/flint" benchdata)
export LC_ALL=C
flint=("$work/flint" submit --conf flint.executor.cores=1 --conf flint.executor.memory="$MEM"
	--conf flint.ui.showConsoleProgress=false)
# timed LABEL BYTES CMD...: wall seconds, MB/s and peak RSS of CMD's
# largest process, and the CPU seconds (user + sys) of CMD and the
# processes it waited for (the embedded agents' executors among them)
timed() {
	local label=$1 bytes=$2
	shift 2
	/usr/bin/time -f "%e %M %U %S" -o "$work/time" "$@" >"$work/out.$label" 2>"$work/err.$label" ||
		{ cat "$work/err.$label" >&2; exit 1; }
	read -r secs rss usr sys <"$work/time"
	awk -v l="$label" -v s="$secs" -v b="$bytes" -v r="$rss" -v u="$usr" -v y="$sys" \
		'BEGIN { printf "%-34s %8.2f s %9.1f MB/s %8.0f MiB peak RSS %8.2f cpu-s %9.1f MB/cpu-s\n", l, s, b/1e6/s, r/1024, u+y, b/1e6/(u+y) }'
}
size() { stat -c %s "$1"; }

echo "machine: $(nproc) cores, $(uname -r); load: $(cut -d' ' -f1-3 /proc/loadavg)"
"${benchdata[@]}" text -size "$TEXT" >"$work/words.txt"
n=$(size "$work/words.txt")
echo "== wordcount over $n bytes"
timed "flint wordcount (embedded, 2 exec)" "$n" "${flint[@]}" --example wordcount -- --top 3 "$work/words.txt"
timed "go map[string]int, 1 goroutine" "$n" "${benchdata[@]}" count "$work/words.txt"
want=$(cat "$work/out.go map[string]int, 1 goroutine")
grep -qxF "$want" "$work/out.flint wordcount (embedded, 2 exec)" || { echo "flint's count differs from Go's ($want)" >&2; exit 1; }
timed "tr | sort | uniq -c" "$n" sh -c "tr -cs '[:alnum:]' '\n' <'$work/words.txt' | sort | uniq -c"
rm "$work/words.txt"

"${benchdata[@]}" records -size "$SORT" >"$work/recs.txt"
n=$(size "$work/recs.txt")
echo "== sort of $n bytes of 100-byte lines"
timed "flint sort (embedded, 2 exec)" "$n" "${flint[@]}" --example sort -- --input "$work/recs.txt" --output "$work/sorted" --partitions 4
timed "GNU sort --parallel=2 -S $GNU_MEM" "$n" sort --parallel=2 -S "$GNU_MEM" -T "$work" -o "$work/gnu.txt" "$work/recs.txt"
cat "$work"/sorted/part-* | cmp -s - "$work/gnu.txt" || { echo "flint's sort differs from GNU sort's" >&2; exit 1; }
rm -rf "$work/recs.txt" "$work/sorted" "$work/gnu.txt"

"${benchdata[@]}" kv -size "$JOIN" -seed 1 >"$work/left.tsv"
"${benchdata[@]}" kv -size "$JOIN" -seed 2 >"$work/right.tsv"
n=$(( $(size "$work/left.tsv") + $(size "$work/right.tsv") ))
echo "== join of two inputs, $n bytes in all"
timed "flint join (embedded, 2 exec)" "$n" "${flint[@]}" --example join -- --left "$work/left.tsv" --right "$work/right.tsv" --output "$work/joined" --partitions 4
echo "joined lines: $(cat "$work"/joined/part-* | wc -l)"
