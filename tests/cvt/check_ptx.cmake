# cmake -DPTX_DIR=<dir> -P check_ptx.cmake: in cvt_sm<arch>.ptx (cvt_ptx.cu
# compiled for sm_<arch>), each kernel below has its conversion
# instruction exactly when arch >= the first target that has it (mb_cvt.h's
# MB_CVT_HW_* table); below that it runs the selects.
#   kernel | instruction (a regex) | first arch
set(_expect
  "k_f32_to_f16|cvt\\.rn\\.f16\\.f32|75"
  "k_f16_to_f32|cvt\\.f32\\.f16|75"
  "k_e5m2_to_f32|cvt\\.f32\\.f16|75"
  "k_f32_to_bf16|cvt\\.rn\\.bf16\\.f32|80"
  "k_f32x2_to_f16x2|cvt\\.rn\\.f16x2\\.f32|80"
  "k_f32x2_to_bf16x2|cvt\\.rn\\.bf16x2\\.f32|80"
  "k_f32_to_e4m3|cvt\\.rn\\.satfinite\\.e4m3x2\\.f32|89"
  "k_f32_to_e5m2|cvt\\.rn\\.satfinite\\.e5m2x2\\.f32|89"
  "k_f32x2_to_e4m3x2|cvt\\.rn\\.satfinite\\.e4m3x2\\.f32|89"
  "k_f32x2_to_e5m2x2|cvt\\.rn\\.satfinite\\.e5m2x2\\.f32|89"
  "k_e4m3_to_f32|cvt\\.rn\\.f16x2\\.e4m3x2|89")
set(_archs 75 80 89)

set(_bad 0)
foreach(_arch ${_archs})
  file(READ "${PTX_DIR}/cvt_sm${_arch}.ptx" _ptx)
  foreach(_e ${_expect})
    string(REPLACE "|" ";" _e "${_e}")
    list(GET _e 0 _kernel)
    list(GET _e 1 _insn)
    list(GET _e 2 _first)
    # The kernel's text: from its .entry to the next one.
    string(FIND "${_ptx}" ".entry ${_kernel}(" _at)
    if(_at EQUAL -1)
      message(SEND_ERROR "sm_${_arch}: no kernel ${_kernel}")
      math(EXPR _bad "${_bad} + 1")
      continue()
    endif()
    string(SUBSTRING "${_ptx}" ${_at} -1 _body)
    string(SUBSTRING "${_body}" 1 -1 _rest)
    string(FIND "${_rest}" ".entry " _next)
    if(NOT _next EQUAL -1)
      string(SUBSTRING "${_body}" 0 ${_next} _body)
    endif()
    string(REGEX MATCH "${_insn}" _has "${_body}")
    if(_arch GREATER_EQUAL _first AND NOT _has)
      message(SEND_ERROR "sm_${_arch}: ${_kernel} lacks ${_insn} (the "
              "hardware conversion, from sm_${_first} on)")
      math(EXPR _bad "${_bad} + 1")
    elseif(_arch LESS _first AND _has)
      message(SEND_ERROR "sm_${_arch}: ${_kernel} has ${_insn}, which "
              "needs sm_${_first}")
      math(EXPR _bad "${_bad} + 1")
    endif()
  endforeach()
endforeach()
list(LENGTH _expect _n)
list(LENGTH _archs _na)
math(EXPR _total "${_n} * ${_na}")
math(EXPR _good "${_total} - ${_bad}")
string(REPLACE ";" ", sm_" _list "sm_${_archs}")
message("${_n} kernels on ${_list}:\n${_good} passed, ${_bad} failed")
if(_bad)
  message(FATAL_ERROR "the wrong conversion instructions")
endif()
