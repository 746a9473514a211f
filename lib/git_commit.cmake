# Writes OUT with the source tree's commit (suffixed "-dirty" when there are
# uncommitted changes), at every build, touching the file only when it
# changes so nothing recompiles needlessly. A configure-time value would go
# stale with the next commit and mislabel recorded results.
set(commit "unknown")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=12 HEAD
                  WORKING_DIRECTORY ${SRC} OUTPUT_VARIABLE head
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  if(rc EQUAL 0 AND head)
    set(commit ${head})
    execute_process(COMMAND ${GIT_EXECUTABLE} status --porcelain --untracked-files=no
                    WORKING_DIRECTORY ${SRC} OUTPUT_VARIABLE dirty ERROR_QUIET)
    if(dirty)
      set(commit "${commit}-dirty")
    endif()
  endif()
endif()
# A tree without .git: the copy carried to a lent GPU machine says which
# commit it is in .deps/commit (tests/gpu/carry_deps.sh wrote it there).
if(commit STREQUAL "unknown" AND EXISTS ${SRC}/.deps/commit)
  file(STRINGS ${SRC}/.deps/commit lines REGEX "^MB_SOURCE_(COMMIT|DIRTY)=")
  foreach(line ${lines})
    if(line MATCHES "^MB_SOURCE_COMMIT=([0-9a-f]+)$")
      string(SUBSTRING ${CMAKE_MATCH_1} 0 12 commit)
    elseif(line STREQUAL "MB_SOURCE_DIRTY=yes")
      set(dirty_carried TRUE)
    endif()
  endforeach()
  if(dirty_carried AND NOT commit STREQUAL "unknown")
    set(commit "${commit}-dirty")
  endif()
endif()
set(text "#define MB_GIT_COMMIT_STR \"${commit}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE ${OUT} "${text}")
endif()
