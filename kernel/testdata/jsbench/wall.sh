#!/bin/sh
cd "$(dirname "$0")"
for i in 1 2 3 4 5 6 7; do for d in wbase wsant wgoogle wqri; do
  s=$(date +%s%N); node $(go env GOROOT)/lib/wasm/wasm_exec_node.js $d.wasm >/dev/null 2>&1; e=$(date +%s%N)
  echo "$d $(( (e-s)/1000000 ))"
done; done
