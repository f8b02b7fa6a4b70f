# The GPU plugins' sources, listed once: plugins/cuda compiles them with
# nvcc, plugins/hip with hipcc (the vendor layer, vendor/, maps CUDA's names
# to HIP's), so the two plugins cannot drift apart. Absolute paths.
set(_loom_gpu ${CMAKE_CURRENT_LIST_DIR})
set(LOOM_GPU_SOURCES
  ${_loom_gpu}/register.cpp ${_loom_gpu}/device.cpp ${_loom_gpu}/runtime.cpp
  ${_loom_gpu}/cuda_allocator_backend.cpp ${_loom_gpu}/pinned_host_backend.cpp)
foreach(_kernel fill_copy.cu random.cu matmul.cu softmax.cu layer_norm.cu cross_entropy.cu
                elementwise.cpp unary.cu unary_float.cu binary.cu compare.cu optim.cu
                reduce_plan.cpp reduce.cu reduce_minmax.cu reduce_stats.cu scan.cu
                index_shape.cpp indexing.cu indexing_masked.cu shape.cu sort.cu pad_embedding.cu
                pool.cu attention.cu)
  list(APPEND LOOM_GPU_SOURCES ${_loom_gpu}/kernels/${_kernel})
endforeach()

# Matrix products: cuBLAS, or the plugin's own tiled GEMM.
set(LOOM_GPU_CUBLAS_SOURCES ${_loom_gpu}/kernels/gemm_cublas.cu ${_loom_gpu}/kernels/cublas_handle.cpp)
set(LOOM_GPU_OWN_GEMM_SOURCES ${_loom_gpu}/kernels/gemm_own.cu)
# Convolutions, batch_norm and the fused RNN: cuDNN, or the plugin's own
# direct convolutions (batch_norm and _rnn then run as their composites).
set(LOOM_GPU_CUDNN_SOURCES ${_loom_gpu}/kernels/conv_cudnn.cu ${_loom_gpu}/kernels/cudnn_conv.cpp
                           ${_loom_gpu}/kernels/cudnn_handle.cpp ${_loom_gpu}/kernels/batch_norm_cudnn.cu
                           ${_loom_gpu}/kernels/rnn_cudnn.cpp)
set(LOOM_GPU_OWN_CONV_SOURCES ${_loom_gpu}/kernels/conv_direct.cu)
