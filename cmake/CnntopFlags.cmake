# cnntop_flags: an INTERFACE target that carries warnings, sanitizers and
# optimisation flags to every target that links it.  Flags are probed so that
# gcc and clang both build warning-free.
include(CheckCCompilerFlag)

add_library(cnntop_flags INTERFACE)

foreach(flag -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
             -Wpointer-arith -Wformat=2 -Wvla)
  string(MAKE_C_IDENTIFIER "HAVE${flag}" var)
  check_c_compiler_flag(${flag} ${var})
  if(${var})
    target_compile_options(cnntop_flags INTERFACE ${flag})
  endif()
endforeach()

# gcc notes that a function returning a 512-bit vector has another ABI
# where AVX-512 is off (a build without -march=native).  The engine's
# vector helpers are static, so no call crosses that boundary.
check_c_compiler_flag(-Wno-psabi HAVE_NO_PSABI)
if(HAVE_NO_PSABI)
  target_compile_options(cnntop_flags INTERFACE -Wno-psabi)
endif()

if(CNNTOP_WERROR)
  target_compile_options(cnntop_flags INTERFACE -Werror)
endif()

if(CNNTOP_NATIVE)
  check_c_compiler_flag(-march=native HAVE_MARCH_NATIVE)
  if(HAVE_MARCH_NATIVE)
    target_compile_options(cnntop_flags INTERFACE -march=native)
  endif()
  # gcc's tuning for AVX-512 Xeons keeps the vectoriser to 256-bit vectors
  # (for the clock drop of older parts).  The loops here (Winograd
  # transforms, conv1, pools) gained from 512: batch 64 4202-4341 ->
  # 4525-4625 img/s, batch 512 4220-4313 -> 4283-4515, alternated on this
  # machine's Xeon.  Without AVX-512 the flag does nothing.
  check_c_compiler_flag(-mprefer-vector-width=512 HAVE_PREFER_512)
  if(HAVE_MARCH_NATIVE AND HAVE_PREFER_512)
    target_compile_options(cnntop_flags INTERFACE -mprefer-vector-width=512)
  endif()
endif()
# The kernels are plain loops written for the vectoriser; -O3 lets it unroll
# and vectorise them.  Float semantics stay strict (no -ffast-math) so results
# are reproducible and comparable with PyTorch, but a*b + c may become one
# fused multiply-add (as it does by default outside ISO C mode): one rounding
# instead of two, and the direct conv1 loops run 10-20% faster.  A given
# build still gives the same results on every run and thread count.
target_compile_options(cnntop_flags INTERFACE $<$<CONFIG:RelWithDebInfo,Release>:-O3>)
check_c_compiler_flag(-ffp-contract=fast HAVE_FP_CONTRACT_FAST)
if(HAVE_FP_CONTRACT_FAST)
  target_compile_options(cnntop_flags INTERFACE -ffp-contract=fast)
endif()
# Nothing reads errno after a math function, and keeping it set means a
# branch around every sqrtf: Adam's loop did not vectorise with it.  Results
# are unchanged.
check_c_compiler_flag(-fno-math-errno HAVE_NO_MATH_ERRNO)
if(HAVE_NO_MATH_ERRNO)
  target_compile_options(cnntop_flags INTERFACE -fno-math-errno)
endif()

set(_san "")
if(CNNTOP_SANITIZE_ADDRESS)
  list(APPEND _san address)
endif()
if(CNNTOP_SANITIZE_UNDEFINED)
  list(APPEND _san undefined)
endif()
if(CNNTOP_SANITIZE_THREAD)
  list(APPEND _san thread)
endif()
if(_san)
  list(JOIN _san "," _san_list)
  target_compile_options(cnntop_flags INTERFACE -fsanitize=${_san_list} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_link_options(cnntop_flags INTERFACE -fsanitize=${_san_list})
endif()
