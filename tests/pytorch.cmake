# The PyTorch cross-check (tests/ref/README.md): dump_step writes one
# training step of cnntop to a file; tests/ref/crosscheck.py replays it in
# PyTorch and compares forward output, loss, every gradient, the BatchNorm
# running statistics and one Adam step.  include()d from tests/CMakeLists.txt.
#
# PyTorch is Debian's python3-torch, so the interpreter is /usr/bin/python3,
# not whatever python3 comes first on PATH (pyenv, a venv).  Override with
# -DCNNTOP_TORCH_PYTHON=/path/to/python3.  Without it, or without torch, the
# test reports "skipped" (exit 77).

add_executable(dump_step ${CMAKE_CURRENT_LIST_DIR}/ref/dump_step.c)
target_include_directories(dump_step PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_compile_definitions(dump_step PRIVATE _GNU_SOURCE)
target_link_libraries(dump_step PRIVATE cnntop_engine cnntop_flags)

find_program(CNNTOP_TORCH_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH
             DOC "Python with torch and numpy for the PyTorch cross-check")

set(_xc_script ${CMAKE_CURRENT_LIST_DIR}/ref/crosscheck.py)
set(_xc_tmp ${CMAKE_CURRENT_BINARY_DIR}/pytorch_crosscheck)

if(CNNTOP_TORCH_PYTHON)
  # Two batches: 16 (one image per work chunk) and 50 (uneven chunks),
  # different seeds, the Winograd GEMMs on each path (--gemm: OpenBLAS, and
  # cnntop's own kernels where the CPU has them).  Any failure fails the
  # test; 77 from Python skips it.
  add_test(NAME pytorch_crosscheck
    COMMAND sh -c [=[
set -e
dump=$1 py=$2 script=$3 tmp=$4
"$dump" "$tmp.b16.bin" --batch 16 --seed 1 --gemm openblas
"$py" "$script" "$tmp.b16.bin"
"$dump" "$tmp.b50.bin" --batch 50 --seed 2 --gemm native
"$py" "$script" "$tmp.b50.bin"
"$dump" "$tmp.b16.bin" --batch 16 --seed 1 --gemm native
"$py" "$script" "$tmp.b16.bin"
"$dump" "$tmp.b50.bin" --batch 50 --seed 2 --gemm openblas
"$py" "$script" "$tmp.b50.bin"
rm -f "$tmp.b16.bin" "$tmp.b50.bin"
]=] pytorch_crosscheck $<TARGET_FILE:dump_step> ${CNNTOP_TORCH_PYTHON} ${_xc_script} ${_xc_tmp})
else()
  add_test(NAME pytorch_crosscheck
    COMMAND sh -c "echo 'pytorch_crosscheck: SKIP: no /usr/bin/python3 (set CNNTOP_TORCH_PYTHON)'; exit 77")
endif()
set_tests_properties(pytorch_crosscheck PROPERTIES
  LABELS "pytorch" TIMEOUT 300 SKIP_RETURN_CODE 77)

unset(_xc_script)
unset(_xc_tmp)
