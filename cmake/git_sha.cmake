# Writes OUT with `#define MEMLAB_GIT_SHA "<sha>[-dirty]"`, only when it changed (so an unchanged
# tree rebuilds nothing). Run at every build by the memlab_git_sha target.
# MEMLAB_GIT_SHA=<commit> in the build's environment names the commit outright: for a copy of the tree without its
# own .git, or with a .git that is not the tree's (a machine the tree was sent to, which may carry an older
# checkout's .git), made by whoever copied it from a clean checkout of that commit. Else git says, "-dirty" where
# the tracked files differ from HEAD.
if(NOT "$ENV{MEMLAB_GIT_SHA}" STREQUAL "")
  set(sha "$ENV{MEMLAB_GIT_SHA}")
else()
  execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SRC}
                  OUTPUT_VARIABLE sha OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR sha STREQUAL "")
    set(sha "unknown")
  else()
    execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY ${SRC}
                    OUTPUT_VARIABLE dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(NOT dirty STREQUAL "")
      string(APPEND sha "-dirty")
    endif()
  endif()
endif()
set(text "#pragma once\n#define MEMLAB_GIT_SHA \"${sha}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUT} "${text}")
endif()
