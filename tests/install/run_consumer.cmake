# Installs the engine (and the QHttpServer adapter, WITH_QHTTPSERVER) from BUILD_DIR into a fresh
# prefix and builds consumers against it the three ways a project outside the tree can:
# find_package(ratelab) for the engine, its qhttpserver component for a Qt service, and
# pkg-config (ratelab.pc) with the compiler alone. Each consumer runs and must decide 200 200 429.
# Arguments: BUILD_DIR SOURCE_DIR LIBDIR CXX [LAUNCHER] [WITH_QHTTPSERVER].
set(work "${BUILD_DIR}/install-test")
set(prefix "${work}/prefix")
file(REMOVE_RECURSE "${work}")

cmake_minimum_required(VERSION 3.25)  # policies of these days for the script (IN_LIST)
include(${CMAKE_CURRENT_LIST_DIR}/../run_step.cmake)

function(expect_decisions program)
    run_step("${program}" "${program}")
    message(STATUS "${program}: ${output}")
    if(NOT output MATCHES "statuses: 200 200 429")
        message(FATAL_ERROR "${program} did not decide 200 200 429: ${output}")
    endif()
endfunction()

run_step("cmake --install" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}")

set(launcher "")
if(LAUNCHER)
    set(launcher "-DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}")
endif()
set(qt OFF)
if(WITH_QHTTPSERVER)
    set(qt ON)
endif()
run_step("configuring the consumer" "${CMAKE_COMMAND}" -S "${SOURCE_DIR}/tests/install/consumer"
    -B "${work}/build" -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_CXX_COMPILER=${CXX} ${launcher} -DWITH_QHTTPSERVER=${qt})
run_step("building the consumer" "${CMAKE_COMMAND}" --build "${work}/build")
expect_decisions("${work}/build/consumer")
if(WITH_QHTTPSERVER)
    expect_decisions("${work}/build/qt_consumer")
endif()

# pkg-config: the installed ratelab.pc, found by PKG_CONFIG_PATH alone.
find_program(pkg_config NAMES pkg-config pkgconf REQUIRED)
set(ENV{PKG_CONFIG_PATH} "${prefix}/${LIBDIR}/pkgconfig")
run_step("pkg-config --modversion ratelab" "${pkg_config}" --modversion ratelab)
string(STRIP "${output}" version)
if(NOT version STREQUAL VERSION)
    message(FATAL_ERROR "ratelab.pc says version ${version}, the project ${VERSION}")
endif()
run_step("pkg-config --cflags --libs ratelab" "${pkg_config}" --static --cflags --libs ratelab)
string(STRIP "${output}" flags)
if(NOT flags MATCHES "-lratelab")
    message(FATAL_ERROR "ratelab.pc does not link the engine: ${flags}")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
run_step("building with pkg-config's flags" ${LAUNCHER} "${CXX}" -std=c++20 -O1
    -o "${work}/pc_consumer" "${SOURCE_DIR}/tests/install/consumer/main.cpp" ${flags})
expect_decisions("${work}/pc_consumer")
