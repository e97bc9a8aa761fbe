"""Code generators: LLVM IR for the CPU, CUDA C for NVIDIA GPUs."""
