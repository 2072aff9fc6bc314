# Run by ctest (script mode) each time it reads the test list: registers the
# GoogleTest executable TEST_EXE's tests as one ctest entry per test suite
# ("Suite.*", one process for the whole suite) instead of one per test.
#
# Why: a test executable that links LibTorch spends about 0.6 s starting
# (LibTorch registering its operators) before its first test runs; with one
# process per test that was over a fifth of the suite's time on 2 cores.
# Suites named in ONE_PROCESS_PER_TEST (their tests take tens of seconds
# each) keep an entry per test, so that ctest -j runs them side by side.
#
# Set by the including file (tests/CMakeLists.txt generates it):
#   TEST_EXE               the executable
#   TEST_WORKDIR           where its tests run
#   ONE_PROCESS_PER_TEST   suite names (without a parametrization prefix)
#   TEST_LIST_CACHE        a file keeping the listing until TEST_EXE changes
#   TEST_TIMEOUT           seconds, per entry
#   TEST_EXTRA_PROPERTIES  triples: an entry-name regex, a property, its value
#                          (fixtures and resource locks between entries)
# Every entry gets OMP_NUM_THREADS=1 and RLWB_UNDER_CTEST=1 (tests/CMakeLists.txt
# says why). Entries of suites that run as one process cost their test count,
# entries of single tests 100, so that ctest -j starts the longest first on a
# fresh checkout (with no timings of an earlier run to go by).

if(NOT EXISTS "${TEST_EXE}")
  get_filename_component(missing "${TEST_EXE}" NAME)
  add_test(${missing}_NOT_BUILT ${missing}_NOT_BUILT)
  return()
endif()

if(NOT EXISTS "${TEST_LIST_CACHE}" OR "${TEST_EXE}" IS_NEWER_THAN "${TEST_LIST_CACHE}")
  execute_process(
    COMMAND "${TEST_EXE}" --gtest_list_tests
    WORKING_DIRECTORY "${TEST_WORKDIR}"
    OUTPUT_VARIABLE listing
    RESULT_VARIABLE listed
    TIMEOUT 120)
  if(NOT listed EQUAL 0)
    message(FATAL_ERROR "${TEST_EXE} --gtest_list_tests failed (${listed}): ${listing}")
  endif()
  file(WRITE "${TEST_LIST_CACHE}" "${listing}")
endif()
file(STRINGS "${TEST_LIST_CACHE}" lines)

set(environment ENVIRONMENT OMP_NUM_THREADS=1 ENVIRONMENT_MODIFICATION RLWB_UNDER_CTEST=set:1)
set(suite "")
set(suite_tests 0)

# Sets TEST_EXTRA_PROPERTIES's properties whose regex matches entry `name`.
macro(add_extra_properties name)
  list(LENGTH TEST_EXTRA_PROPERTIES extra_length)
  set(extra_index 0)
  while(extra_index LESS extra_length)
    math(EXPR property_index "${extra_index} + 1")
    math(EXPR value_index "${extra_index} + 2")
    list(GET TEST_EXTRA_PROPERTIES ${extra_index} pattern)
    list(GET TEST_EXTRA_PROPERTIES ${property_index} property)
    list(GET TEST_EXTRA_PROPERTIES ${value_index} value)
    if("${name}" MATCHES "${pattern}")
      set_tests_properties("${name}" PROPERTIES ${property} ${value})
    endif()
    math(EXPR extra_index "${extra_index} + 3")
  endwhile()
endmacro()

# Registers the finished suite `suite` (with `suite_tests` tests) as one entry.
macro(add_suite_entry)
  if(NOT suite STREQUAL "" AND suite_tests GREATER 0)
    add_test("${suite}.*" "${TEST_EXE}" "--gtest_filter=${suite}.*")
    set_tests_properties("${suite}.*" PROPERTIES WORKING_DIRECTORY "${TEST_WORKDIR}" TIMEOUT ${TEST_TIMEOUT}
                                                COST ${suite_tests} ${environment})
    add_extra_properties("${suite}.*")
  endif()
endmacro()

foreach(line IN LISTS lines)
  string(REGEX REPLACE " *#.*$" "" line "${line}")  # "  # GetParam() = ..."
  if(line MATCHES "^([^ ].*)\\.$")  # a suite: "Prefix/Suite."
    set(next_suite "${CMAKE_MATCH_1}")  # before add_suite_entry's own MATCHES
    add_suite_entry()
    set(suite "${next_suite}")
    set(suite_tests 0)
    string(REGEX REPLACE "^.*/" "" bare_suite "${suite}")
    list(FIND ONE_PROCESS_PER_TEST "${bare_suite}" one_per_test)
  elseif(line MATCHES "^  (.+)$")  # a test of the current suite
    set(test "${CMAKE_MATCH_1}")
    if(test MATCHES "^DISABLED_" OR suite MATCHES "^DISABLED_")
      continue()
    endif()
    if(one_per_test GREATER_EQUAL 0)
      add_test("${suite}.${test}" "${TEST_EXE}" "--gtest_filter=${suite}.${test}")
      set_tests_properties(
        "${suite}.${test}" PROPERTIES WORKING_DIRECTORY "${TEST_WORKDIR}" TIMEOUT ${TEST_TIMEOUT} COST 100
                                      SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]" ${environment})
      add_extra_properties("${suite}.${test}")
    else()
      math(EXPR suite_tests "${suite_tests} + 1")
    endif()
  endif()
endforeach()
add_suite_entry()
