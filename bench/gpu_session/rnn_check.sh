#!/bin/bash
# The fused RNN on the GPU (cuDNN), after run_checks.sh's set-up:
# ONLY='bash bench/gpu_session/rnn_check.sh' bash bench/gpu_session/run_checks.sh
set -u
T="timeout -k 5"
$T 120 build/bin/loom-conformance --device cuda --grad -o _rnn,_rnn_backward,lstm_cell,gru_cell,rnn_tanh_cell,rnn_relu_cell 2>&1 | tail -12
$T 180 python3 -m pytest -q -p no:cacheprovider frontend_python/tests/test_rnn.py frontend_python/tests/test_amp.py 2>&1 | tail -15
$T 240 python3 bench/rnn_bench.py cuda 2>&1 | tail -8
