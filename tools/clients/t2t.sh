#!/bin/bash
# t2t.sh TAG : run torch2trt's converter and feature tests (283) through the shim; junit xml in logs/t2t_TAG.xml
cd /work/clients_run/src/torch2trt
PYTHONPATH=/work/clients_run:${TRTLITE_WT:-/work/wt/clients2}:. SHIM_MODULE=pytest timeout 3000 python /work/clients_run/shim.py pytest tests/converter_tests tests/feature_tests -q -p no:cacheprovider --junitxml=/work/clients_run/logs/t2t_$1.xml -o junit_logging=no --tb=line > /work/clients_run/logs/t2t_$1.log 2>&1
echo rc=$? >> /work/clients_run/logs/t2t_$1.log
