#!/bin/sh
cd "$(dirname "$0")"
for d in wbase wsant wgoogle wqri; do
  GOOS=js GOARCH=wasm go build -trimpath -ldflags='-s -w' -o $d.wasm ./$d
  raw=$(stat -c %s $d.wasm); gz=$(gzip -9 -c $d.wasm | wc -c)
  echo "$d raw=$raw gz=$gz"
done
for d in wbase wsant wgoogle wqri; do
  for i in 1 2 3; do
    echo "== $d run $i"
    GODEBUG=inittrace=1 node $(go env GOROOT)/lib/wasm/wasm_exec_node.js $d.wasm 2>&1 | grep -v 'init \(runtime\|errors\|sync\|io\|os\|unicode\|internal\|syscall\|time\|math\|strconv\|reflect\|sort\|slices\|strings\|bytes\|fmt\|encoding\|context\|path\|iter\|cmp\|maps\|unique\|weak\|hash\|bufio\|regexp\|crypto\|net\|mime\|vendor\|compress\|container\|log\|text\|html\|flag\)'
    /usr/bin/time -f "wall=%e s" node $(go env GOROOT)/lib/wasm/wasm_exec_node.js $d.wasm 2>&1 | tail -2
  done
done
