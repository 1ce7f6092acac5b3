#!/bin/bash
# Call 6: the registration's end tolerated where the memory went first (a
# group of VecDuplicateVecs() destroyed first vector first, in the pinned
# tests now). The pinned tests, then the robustness suite (host vectors,
# many matrices, many solves), as far as the time limit lets it run.
B=build/petsc-3.26-cuda
O=${OUT:-out}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/device.txt; date -u >> $O/device.txt
FUSED_BUILD=$B timeout 120 bash tools/gpu-session.sh tests '^gpu-pinned' > $O/gpu-tests-pinned.txt 2>&1
FUSED_BUILD=$B timeout ${TLIMIT:-420} bash tools/gpu-session.sh tests '^robust' > $O/gpu-tests-robust.txt 2>&1
