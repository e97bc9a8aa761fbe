"""LLVM IR emitters (llvmlite.ir builders) for the CPU backend."""
