"""Backends that turn emitted source into callable kernels."""
