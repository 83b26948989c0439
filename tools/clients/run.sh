#!/bin/bash
# run.sh LOGNAME SCRIPT ARGS... : run a client script through the shim from its own directory
log=/work/clients_run/logs/$1.log; shift
mkdir -p /work/clients_run/logs
s=$(readlink -f "$1"); shift
cd "$(dirname "$s")"
PYTHONPATH=/work/clients_run:${TRTLITE_WT:-/work/wt/clients2}${PYTHONPATH:+:$PYTHONPATH} timeout ${TMO:-900} python /work/clients_run/shim.py "$s" "$@" > $log 2>&1
echo "rc=$?" >> $log
tail -${TAILN:-15} $log
