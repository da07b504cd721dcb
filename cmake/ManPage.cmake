# cmake -DHEADROOM=<binary> -DVERSION=<x.y.z> -DOUT=<headroom.1> -P ManPage.cmake
# The man page headroom(1) made from the program's own --help texts (those of `headroom` and of each
# subcommand that has one), so it never says other than the program does. Each text goes in verbatim
# (no-fill), with roff's control characters escaped. Run at build time by cmake/Package.cmake.
if(NOT HEADROOM OR NOT OUT)
  message(FATAL_ERROR "ManPage.cmake: pass -DHEADROOM=<binary> -DOUT=<file>")
endif()

function(help_of out_var)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env LANG=C LC_ALL=C LANGUAGE= QT_QPA_PLATFORM=offscreen
                          ${HEADROOM} ${ARGN} --help
                  OUTPUT_VARIABLE text ERROR_QUIET RESULT_VARIABLE rc TIMEOUT 60)
  if(NOT rc EQUAL 0)
    set(text "")
  endif()
  set(${out_var} "${text}" PARENT_SCOPE)
endfunction()

# roff: a backslash is \e, a line starting with . or ' is protected with \&
function(roff_verbatim out_var text)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REGEX REPLACE "\n([.'])" "\n\\\\&\\1" text "\n${text}")
  string(SUBSTRING "${text}" 1 -1 text)
  set(${out_var} ".nf\n${text}\n.fi\n" PARENT_SCOPE)
endfunction()

help_of(main)
if(main STREQUAL "")
  message(FATAL_ERROR "ManPage.cmake: '${HEADROOM} --help' failed")
endif()
string(REGEX MATCH "^[^\n]*" first_line "${main}")
string(REGEX REPLACE "^Headroom [^:]*: " "" summary "${first_line}")
string(REGEX REPLACE "\\.$" "" summary "${summary}")
string(FIND "${main}" "\n" eol)
math(EXPR eol "${eol} + 1")
string(SUBSTRING "${main}" ${eol} -1 main_body)
string(TIMESTAMP date "%Y-%m-%d" UTC)

set(page ".TH HEADROOM 1 \"${date}\" \"Headroom ${VERSION}\" \"User Commands\"\n")
string(APPEND page ".SH NAME\nheadroom \\- ${summary}\n")
string(APPEND page ".SH SYNOPSIS\n.B headroom\n[\\fICOMMAND\\fR] [\\fIOPTIONS\\fR]\n")
string(APPEND page ".SH DESCRIPTION\n${first_line}\n.PP\n")
roff_verbatim(body "${main_body}")
string(APPEND page "${body}")
# the subcommands with options (devices and presets take none: they list what this machine has)
foreach(cmd train plan report runs)
  help_of(sub ${cmd})
  if(NOT sub STREQUAL "" AND NOT sub STREQUAL main)
    string(APPEND page ".SH \"HEADROOM ${cmd}\"\n")
    roff_verbatim(body "${sub}")
    string(APPEND page "${body}")
  endif()
endforeach()
string(APPEND page ".SH FILES\n.TP\n.I /usr/share/headroom/translations\nthe interface's translations\n")
string(APPEND page ".SH SEE ALSO\nThe README and docs/ of the source tree: docs/run-json.md, docs/model-spec.md, docs/strategies.md.\n")
file(WRITE "${OUT}" "${page}")
