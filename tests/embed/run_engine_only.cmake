# Configures ratelab without the app and without the Redis store (hiredis), builds the suites
# labelled "engine" only, and runs them. The tree sits beside BUILD_DIR at the same depth
# (BUILD_DIR-engine-only), with the same compiler, launcher and build type, so ccache serves the
# objects the full build already compiled.
# Arguments: SOURCE_DIR BUILD_DIR GENERATOR BUILD_TYPE CXX CTEST [LAUNCHER].
set(build "${BUILD_DIR}-engine-only")

cmake_minimum_required(VERSION 3.25)  # policies of these days for the script (IN_LIST)
include(${CMAKE_CURRENT_LIST_DIR}/../run_step.cmake)

set(launcher "")
if(LAUNCHER)
    set(launcher "-DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}")
endif()
run_step("configuring without the app" "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${build}"
    -G "${GENERATOR}" -DCMAKE_BUILD_TYPE=${BUILD_TYPE} -DCMAKE_CXX_COMPILER=${CXX} ${launcher}
    -DRATELAB_BUILD_APP=OFF -DRATELAB_WITH_REDIS=OFF -DRATELAB_BUILD_TESTS=ON -DRATELAB_BUILD_BENCH=OFF
    -DRATELAB_BUILD_QHTTPSERVER=OFF -DRATELAB_INSTALL=OFF)

# The names of the tests `ctest -N` lists with the given arguments.
function(registered_tests out)
    run_step("listing the tests" "${CTEST}" --test-dir "${build}" -N ${ARGN})
    string(REGEX MATCHALL "Test +#[0-9]+: [A-Za-z0-9_]+" listed "${output}")
    list(TRANSFORM listed REPLACE ".*: " "")
    set(${out} "${listed}" PARENT_SCOPE)
endfunction()

# Every registered suite is the engine's: none needs the simulator or ratelab-cli.
registered_tests(all)
foreach(name IN ITEMS tst_scenario_runner tst_cli tst_cli_sim tst_policy_corpus tst_identity_cli
                      tst_decisions tst_http_limiter)
    if(name IN_LIST all)
        message(FATAL_ERROR "${name} is registered without the app")
    endif()
endforeach()

registered_tests(targets -L "^engine$")
list(LENGTH targets count)
if(count LESS 8)
    message(FATAL_ERROR "only ${count} engine tests without the app: ${targets}")
endif()
run_step("building the engine tests" "${CMAKE_COMMAND}" --build "${build}" --target ${targets})
run_step("running the engine tests" "${CTEST}" --test-dir "${build}" -L "^engine$" --output-on-failure)
message(STATUS "${output}")
