#!/bin/bash
# Call 7: Debian's PETSc 3.18 (no CUDA in PETSc: host vectors only), the
# pinned tests (.carry/ob.tar.xz is the 3.18 bundle, .carry/b318.tar.xz this
# build's library and test programs).
O=${OUT:-out}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/device.txt; date -u >> $O/device.txt
tar -xJf .carry/b318.tar.xz
timeout 300 bash tools/gpu-session.sh tests '^gpu-pinned' > $O/gpu-tests-pinned-3.18.txt 2>&1
