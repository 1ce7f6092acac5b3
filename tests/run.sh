#!/bin/sh
# Runs every test in tests/list this machine can run, one line each, and
# closes with "N passed, N failed, N skipped". GPU tests run only where a
# CUDA device answers, and count as skipped, never passed, elsewhere
# (FUSED_REQUIRE_GPU=1 turns a missing device into a failure: make check-gpu).
#
# tests/list: name | ranks | expect | program and arguments
#   expect: pass          exit code 0
#           gpu           needs a CUDA device, then exit code 0
#           error:REGEX   nonzero exit and REGEX (grep -E) in the output
#           gpuerror:REGEX  the same, on a CUDA device only (skipped elsewhere)
#           nogpuerror:REGEX  the same, where there is no CUDA device (skipped on a GPU host)
#   expect may start with "petsc>=3.N " or "petsc<3.N ": the test belongs to
#   those PETSc versions only and is neither run nor counted with the others
#   (for behaviour that PETSc itself changed between versions). "petsc-cuda "
#   likewise marks a test of a PETSc built with CUDA (its VECCUDA, aijcusparse
#   and GPU preconditioners), run and counted only there.
# "lib/libpetscfused.so" in a command is this build's library (FUSED_LIB).
cd "$(dirname "$0")/.." || exit 2
BUILD=${FUSED_BUILD:-build}
FUSED_LIB=${FUSED_LIB:-lib/libpetscfused.so}
BIN=$BUILD/tests
LOG=$BUILD/test-logs
mkdir -p "$LOG"
MPIEXEC=${MPIEXEC:-mpiexec}
# Open MPI refuses root unless told; CI runs as root
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
TIMEOUT=${TEST_TIMEOUT:-600}

if "$BIN/devices" -require >"$LOG/devices.log" 2>&1; then HAVE_GPU=1; else HAVE_GPU=0; fi
PETSC_MINOR=$(sed -n 's/^PETSc version: 3\.\([0-9]*\)\..*/\1/p' "$LOG/devices.log")
[ -n "$PETSC_MINOR" ] || { echo "FAIL: $BIN/devices did not say the PETSc version:"; cat "$LOG/devices.log"; exit 1; }
PETSC_CUDA=$(sed -n 's/^PETSc with CUDA: //p' "$LOG/devices.log")
echo "PETSc 3.$PETSC_MINOR${PETSC_CUDA:+ (CUDA: $PETSC_CUDA)}, build $BUILD"
if [ "$HAVE_GPU" = 0 ] && [ "${FUSED_REQUIRE_GPU:-0}" = 1 ]; then
  echo "FAIL: make check-gpu needs a CUDA device:"; cat "$LOG/devices.log"; exit 1
fi

# what a sanitizer says when it found something: ASan, LSan, UBSan, compute-sanitizer
SANITIZER_REPORT="ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|ERROR SUMMARY: [1-9]|LEAK SUMMARY: [1-9]|process didn't terminate successfully"
pass=0; fail=0; skip=0; failed=""
while IFS='|' read -r name ranks expect cmd; do
  name=$(echo "$name" | sed 's/^ *//;s/ *$//')
  case "$name" in ''|\#*) continue;; esac
  # TESTS_FILTER=REGEX runs only the tests whose names match
  if [ -n "${TESTS_FILTER:-}" ] && ! echo "$name" | grep -Eq -- "$TESTS_FILTER"; then continue; fi
  ranks=$(echo "$ranks" | tr -d ' '); expect=$(echo "$expect" | sed 's/^ *//;s/ *$//')
  cmd=$(echo "$cmd" | sed "s/^ *//; s|lib/libpetscfused.so|$FUSED_LIB|g")
  case "$expect" in
    petsc-cuda\ *) [ "$PETSC_CUDA" = yes ] || continue; expect=${expect#petsc-cuda } ;;
  esac
  case "$expect" in
    petsc\>=3.*|petsc\<3.*)
      cond=${expect%% *}; expect=${expect#* }; v=${cond#petsc*3.}
      case "$cond" in
        petsc\>=*) [ "$PETSC_MINOR" -ge "$v" ] || continue ;;
        *) [ "$PETSC_MINOR" -lt "$v" ] || continue ;;
      esac ;;
  esac
  if { [ "$expect" = gpu ] || [ "${expect#gpuerror:}" != "$expect" ]; } && [ "$HAVE_GPU" = 0 ]; then
    echo "SKIP $name (no CUDA device)"; skip=$((skip + 1)); continue
  fi
  if [ "${expect#nogpuerror:}" != "$expect" ] && [ "$HAVE_GPU" = 1 ]; then
    echo "SKIP $name (tests the machine without a CUDA device)"; skip=$((skip + 1)); continue
  fi
  prog=${cmd%% *}; args=${cmd#"$prog"}
  [ "$prog" = "$cmd" ] && args=""
  exe=$BIN/$prog; [ -x "$exe" ] || exe=$BUILD/examples/$prog # the examples are tested too
  # FUSED_TEST_WRAPPER (make check-gpu-sanitize: compute-sanitizer) runs in front of every program, on every rank
  wrap=${FUSED_TEST_WRAPPER:-}
  if [ "$ranks" -gt 1 ]; then run="$MPIEXEC -n $ranks $wrap $exe"; else run="$wrap $exe"; fi
  # shellcheck disable=SC2086
  timeout "$TIMEOUT" $run $args >"$LOG/$name.log" 2>&1 </dev/null
  rc=$?
  ok=0
  case "$expect" in
    pass|gpu) [ $rc = 0 ] && ok=1 ;;
    error:*|gpuerror:*|nogpuerror:*) re=${expect#*error:}; [ $rc != 0 ] && [ $rc != 124 ] && grep -Eq -- "$re" "$LOG/$name.log" && ok=1 ;;
  esac
  # a sanitized build (make check-asan): any report fails the test, whatever it expected
  if [ "${FUSED_SANITIZE:-0}" = 1 ] && grep -Eq "$SANITIZER_REPORT" "$LOG/$name.log"; then
    echo "     sanitizer report:"; grep -E -A3 "$SANITIZER_REPORT" "$LOG/$name.log" | head -8 | sed 's/^/     /'
    ok=0
  fi
  summary=$(grep -E '^  ' "$LOG/$name.log" | tail -1 | sed 's/^ *//' | cut -c1-110)
  if [ $ok = 1 ]; then
    echo "PASS $name  $summary"; pass=$((pass + 1))
  else
    echo "FAIL $name (exit $rc; log $LOG/$name.log)"; grep -E 'FAIL|ERROR' "$LOG/$name.log" | head -5 | sed 's/^/     /'
    fail=$((fail + 1)); failed="$failed $name"
  fi
done < tests/list

[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
