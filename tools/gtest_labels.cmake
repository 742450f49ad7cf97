# CMake 3.25's gtest_discover_tests flattens list values in PROPERTIES: `PROPERTIES LABELS
# "unit;sanitize"` yields the label "unit" alone (and `ctest -L sanitize` finds nothing). This
# wrapper keeps the call everyone writes: it takes LABELS out of PROPERTIES, lets the original
# discover the tests, and sets the labels on the discovered list from one more ctest include file.
function(gtest_discover_tests target)
  set(args "")
  set(labels "")
  set(list_var "${target}_TESTS")
  set(in_properties FALSE)
  set(i 1)
  while(i LESS ARGC)
    set(arg "${ARGV${i}}")
    math(EXPR next "${i} + 1")
    if(arg STREQUAL "PROPERTIES")
      set(in_properties TRUE)
      list(APPEND args PROPERTIES)
    elseif(in_properties AND arg STREQUAL "LABELS" AND next LESS ARGC)
      set(labels "${ARGV${next}}")
      set(i ${next})
    elseif(arg STREQUAL "TEST_LIST" AND next LESS ARGC)
      set(list_var "${ARGV${next}}")
      list(APPEND args TEST_LIST "${list_var}")
      set(i ${next})
    else()
      if(arg MATCHES "^(EXTRA_ARGS|WORKING_DIRECTORY|TEST_PREFIX|TEST_SUFFIX|TEST_FILTER|NO_PRETTY_TYPES|NO_PRETTY_VALUES|DISCOVERY_TIMEOUT|XML_OUTPUT_DIR|DISCOVERY_MODE)$")
        set(in_properties FALSE)
      endif()
      string(REPLACE ";" "\\;" arg "${arg}")
      list(APPEND args "${arg}")
    endif()
    math(EXPR i "${i} + 1")
  endwhile()
  _gtest_discover_tests(${target} ${args})
  if(labels STREQUAL "")
    return()
  endif()
  if("sanitize" IN_LIST labels)
    set_property(GLOBAL APPEND PROPERTY LOCKSTEP_SANITIZE_TEST_TARGETS ${target})
  endif()
  # Every test labelled `real` runs alone (RUN_SERIAL): a real server's replies and the C
  # client's timers run on the wall clock, and on a 2-core machine a CPU-bound neighbour (a soak
  # test, a second JVM ensemble) once starved a 3-server ensemble until a plain create timed out
  # (ZOPERATIONTIMEOUT after 2/3 of a 4 s session).
  set(serial "")
  if("real" IN_LIST labels)
    set(serial " RUN_SERIAL TRUE")
  endif()
  set(labels_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_labels.cmake")
  file(WRITE "${labels_file}"
    "if(${list_var})\n  set_tests_properties(\${${list_var}} PROPERTIES LABELS \"${labels}\"${serial})\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${labels_file}")
endfunction()

# `lockstep_sanitize_tests` builds just the test programs labelled `sanitize`, so that the
# ASan+UBSan configuration of `./lockstep test` compiles what `ctest -L sanitize` runs and no
# more. Created once every area has been added (deferred to the end of the top-level file).
function(_lockstep_sanitize_tests_target)
  get_property(targets GLOBAL PROPERTY LOCKSTEP_SANITIZE_TEST_TARGETS)
  add_custom_target(lockstep_sanitize_tests)
  if(targets)
    add_dependencies(lockstep_sanitize_tests ${targets})
  endif()
endfunction()
cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL _lockstep_sanitize_tests_target)
