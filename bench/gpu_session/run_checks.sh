#!/bin/bash
# One GPU session, run from the repository root on the GPU machine: unpacks the build that
# stage.sh packed (.devstage/stage.tar.xz) under $LOOM_DEV_ROOT, points the loader at PyTorch's
# cuBLAS/cuDNN, then runs the CUDA checks in order of value, each under its own time limit
# (BUDGET seconds in all), logs into $OUT/logs.tar.gz. ONLY='command' runs just that command
# after the set-up (e.g. ONLY='python3 bench/gpu_session/attn_sweep.py').
set -u
SRC=$PWD
OUT=${OUT:-/tmp/out}
ROOT=${LOOM_DEV_ROOT:-/opt/loomdev}
LOGS=/tmp/loomlogs
BUDGET=${BUDGET:-500}
T0=$(date +%s)
mkdir -p "$OUT" "$LOGS"
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
summary=()
step() {  # step <name> <seconds> <command...>
  local name=$1 t=$2; shift 2
  local l; l=$(left)
  if (( l < 15 )); then summary+=("$name: SKIPPED (no time)"); return; fi
  (( t > l - 5 )) && t=$(( l - 5 ))
  el "== $name (limit ${t}s)"
  local s; s=$(date +%s)
  timeout -k 5 "$t" "$@" > "$LOGS/$name.log" 2>&1
  local rc=$?
  summary+=("$name: rc=$rc in $(( $(date +%s) - s ))s")
  tail -n "${TAILN:-8}" "$LOGS/$name.log" | cut -c1-300
}

el "start"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
grep PRETTY /etc/os-release; ldd --version | head -1; python3 --version
rm -rf "$ROOT" && mkdir -p "$ROOT" && cp -a "$SRC"/. "$ROOT"/ && cd "$ROOT" && tar -xJf .devstage/stage.tar.xz || exit 1
el "unpacked"
CUBLAS=$(find /opt /usr/local /usr/lib -name 'libcublas.so.13' 2>/dev/null | head -1)
CUDNN=$(find /opt /usr/local /usr/lib -name 'libcudnn.so.9' 2>/dev/null | head -1)
# NCCL for the nccl plugin: the toolkit's first, else a wheel's (nvidia-nccl), else the one stage.sh
# packed into devlibs with NCCL_LIB=1.
NCCL=$( (find /usr/local/cuda*/lib* -name 'libnccl.so.2*'; find /opt /usr/lib /usr/local/lib -name 'libnccl.so.2*') \
  2>/dev/null | head -1)
echo "cublas: $CUBLAS"; echo "cudnn: $CUDNN"; echo "nccl: ${NCCL:-none (devlibs?)}"
export LD_LIBRARY_PATH=$ROOT/devlibs:$(dirname "$CUBLAS"):$(dirname "$CUDNN")${NCCL:+:$(dirname "$NCCL")}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LOOM_PLUGIN_PATH=$ROOT/build/share/loom/plugins
ldd build/lib/loom/plugins/libloom_cuda.so build/lib/loom/plugins/libloom_cpu.so build/lib/loom/plugins/libloom_nccl.so \
  | grep -i 'not found'
el "libs set"
export PYTHONPATH=$ROOT/build/python PYTHONUNBUFFERED=1
if [ -n "${ONLY:-}" ]; then eval "$ONLY"; el "done"; exit; fi

TAILN=20 step info 20 build/bin/loom-info
for t in plugin coverage indexing_device cross_entropy_device batch_norm_device attention_device fused_codegen; do
  step "t_$t" 90 build/bin/cuda_${t}_tests
done
# The nccl plugin: its host-side tests (a world of one on cuda:0), every collective x dtype on the card
# against CPU references (nccl_check.cpp), and with two GPUs or more a world across them and a rank
# SIGKILLed during an all_reduce (the others must fail naming it, not hang).
step t_nccl 60 build/bin/loom_nccl_plugin_tests '~[stub]'  # [stub]: the stub runtime's, not staged
TAILN=12 step nccl 120 build/bin/nccl_gpu_check
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if (( GPUS >= 2 )); then
  TAILN=12 step nccl_world 180 build/bin/loom-run --nproc-per-node "$GPUS" build/bin/nccl_gpu_check
  TAILN=12 step nccl_die 120 build/bin/nccl_gpu_check die 2 10000
fi
step train_mlp 60 build/bin/train_mlp --device cuda
step train_cnn 90 build/bin/train_cnn --device cuda
TAILN=60 step conformance 150 build/bin/loom-conformance --device cuda --full --grad -j 12 \
  --report "$LOGS/conformance.jsonl" --matrix "$LOGS/conformance_matrix.md"
export PYTHONPATH=$ROOT/build/python PYTHONUNBUFFERED=1
# Issue 22's whole models against PyTorch on the card, float32 then bfloat16 (GPT), with
# loom's per-op table of one step of each.
TAILN=30 step models 180 python3 bench/models/run_models.py --device cuda --config cuda --steps 5 --profile \
  --json "$LOGS/models.json"
TAILN=12 step models_bf16 90 python3 bench/models/run_models.py --device cuda --config cuda --steps 5 \
  --models gpt --dtype bfloat16 --json "$LOGS/models_bf16.json"
# Issue 24: a model traced on the CPU, saved, loaded onto the card from C++.
step deploy 60 sh -c "PYTHONPATH=build/python python3 samples/python/train_digits.py --model cnn --epochs 15 \
  --min-accuracy 0.9 --save-traced $LOGS/digits_cnn.loom && build/bin/deploy --model $LOGS/digits_cnn.loom --device cuda"
# Issue 24: the CUDA plugin's NVRTC regions: GELU as eight ops over 64M floats (fused vs
# eager vs copy bandwidth vs torch.compile); loom-conformance above ran the random regions.
TAILN=10 step fusion_gpu 120 python3 bench/jit_fusion_bench.py --device cuda --numel 67108864 --reps 20
# Issue 24's GPU target: GPT-2 small (12 x 768, vocab 50257) forward at batch 8 x 512, traced vs
# loom eager vs PyTorch eager vs torch.compile.
TAILN=8 step jit_gpt2 180 python3 bench/jit_models.py --device cuda --models gpt --config gpt2 --reps 10
TAILN=40 step bench 240 python3 bench/cuda_bench.py
TAILN=12 step encoder 60 python3 bench/gpu_session/encoder_breakdown.py
TAILN=15 step pytest 60 python3 -m pytest -q -p no:cacheprovider frontend_python/tests/test_device_runtime.py \
  frontend_python/tests/test_pinned_memory.py frontend_python/tests/test_out_of_memory.py
step memcheck_conf 90 compute-sanitizer --tool memcheck --error-exitcode 9 build/bin/loom-conformance --device cuda \
  --full -o _adam_step_,_adam_update_,_sgd_step_,copy_ --in-process
tar -C "$LOGS" -czf "$OUT/logs.tar.gz" .
el "done"
printf '%s\n' "${summary[@]}"
