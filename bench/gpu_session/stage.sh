#!/bin/bash
# Packs what a GPU run needs from build/ into .devstage/stage.tar.xz (about 15 MB): the loom
# libraries and plugins, the CUDA device tests, loom-conformance, the samples, the Python package
# (with a _C built for the GPU machine's Python, if you built one: see README.md) and the Debian
# libraries the CPU plugin links (oneDNN, OpenCL loader, libgomp), which a GPU image lacks.
set -e
cd "$(dirname "$0")/../.."
mkdir -p .devstage
S=/tmp/stage; rm -rf $S; mkdir -p $S/build/{bin,lib/loom/plugins,share/loom/plugins,python} $S/devlibs
cp build/lib/*.so $S/build/lib/
# Every plugin but hip: it needs ROCm's runtime, which the NVIDIA images lack.
for p in build/lib/loom/plugins/*.so; do [ "$(basename $p)" = libloom_hip.so ] || cp $p $S/build/lib/loom/plugins/; done
for m in build/share/loom/plugins/*.json; do [ "$(basename $m)" = hip.json ] || cp $m $S/build/share/loom/plugins/; done
# OWN=<tree>: that tree's CUDA plugin instead, built with -DLOOM_GPU_VENDOR_LIBRARIES=OFF (the own
# GEMM and convolutions the HIP plugin runs; README.md).
if [ -n "$OWN" ]; then cp "$OWN/lib/loom/plugins/libloom_cuda.so" $S/build/lib/loom/plugins/; fi
for b in cuda_plugin_tests cuda_coverage_tests cuda_indexing_device_tests cuda_cross_entropy_device_tests cuda_batch_norm_device_tests cuda_attention_device_tests loom-conformance loom-info train_cnn train_mlp; do cp build/bin/$b $S/build/bin/; done
# The nccl plugin's checks (built where the plugin is) and the launcher for a world across GPUs.
for b in loom_nccl_plugin_tests nccl_gpu_check loom-run; do [ -f build/bin/$b ] && cp build/bin/$b $S/build/bin/; done
cp -a build/python/loom $S/build/python/
cp -L /lib/x86_64-linux-gnu/libdnnl.so.2 /lib/x86_64-linux-gnu/libOpenCL.so.1 /lib/x86_64-linux-gnu/libgomp.so.1 $S/devlibs/
# NCCL_LIB=1: the toolkit's libnccl too (about 220 MB before xz), for a GPU image without one.
if [ -n "${NCCL_LIB:-}" ]; then cp -L /usr/local/cuda/lib64/libnccl.so.2 $S/devlibs/; fi
find $S -name '*.so*' -o -path '*/bin/*' -type f | xargs strip --strip-unneeded
tar -C $S -cf - . | xz -T2 -6 > .devstage/stage.tar.xz
ls -la .devstage/stage.tar.xz
