# Configures tests/embed/parent, which embeds ratelab with add_subdirectory(), three ways and
# checks that ratelab leaves the parent's cache as the parent set it (build type, release flags),
# adds -Werror to no compile command unless asked (RATELAB_WERROR), builds only the engine by
# default, and builds the QHttpServer adapter when asked. Configure only: nothing is compiled.
# Arguments: SOURCE_DIR WORK GENERATOR.
cmake_minimum_required(VERSION 3.25)  # policies of these days for the script (IN_LIST)
include(${CMAKE_CURRENT_LIST_DIR}/../run_step.cmake)
file(REMOVE_RECURSE "${WORK}")

# Configures the parent into WORK/<name> with the given -D arguments; `commands` is then every
# compile command ratelab's targets would run, one per list item.
function(configure_parent name)
    set(build "${WORK}/${name}")
    run_step("configuring the parent (${name})" "${CMAKE_COMMAND}" -S "${SOURCE_DIR}/tests/embed/parent"
             -B "${build}" -G "${GENERATOR}" -DRATELAB_SOURCE_DIR=${SOURCE_DIR} ${ARGN})
    file(READ "${build}/compile_commands.json" json)
    string(JSON count LENGTH "${json}")
    math(EXPR last "${count} - 1")
    set(list "")
    foreach(i RANGE ${last})
        string(JSON command GET "${json}" ${i} command)
        list(APPEND list "${command}")
    endforeach()
    set(commands "${list}" PARENT_SCOPE)
    set(build "${build}" PARENT_SCOPE)
endfunction()

function(expect_cache build key expected)
    file(STRINGS "${build}/CMakeCache.txt" line REGEX "^${key}:[A-Z]+=")
    string(REGEX REPLACE "^${key}:[A-Z]+=" "" value "${line}")
    if(NOT value STREQUAL expected)
        message(FATAL_ERROR "${key} is \"${value}\" in the parent's cache, not \"${expected}\"")
    endif()
endfunction()

# Whether some compile command of ratelab's source file `file` contains `flag` (a regex).
function(expect_flag commands file flag wanted)
    set(seen FALSE)
    set(found FALSE)
    foreach(command IN LISTS commands)
        if(command MATCHES "${file}")
            set(seen TRUE)
            if(command MATCHES "${flag}")
                set(found TRUE)
            endif()
        endif()
    endforeach()
    if(NOT seen)
        message(FATAL_ERROR "no compile command for ${file}")
    endif()
    if(NOT found STREQUAL wanted)
        message(FATAL_ERROR "${flag} in the commands of ${file}: ${found}, expected ${wanted}")
    endif()
endfunction()

# The parent's own build type and flags.
configure_parent(own -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELEASE=-O3 -DPARENT"
                     -DCMAKE_CXX_FLAGS=-DPARENT_EVERYWHERE -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)
expect_cache("${build}" CMAKE_BUILD_TYPE "RelWithDebInfo")
expect_cache("${build}" CMAKE_CXX_FLAGS_RELEASE "-O3 -DPARENT")
expect_cache("${build}" CMAKE_CXX_FLAGS "-DPARENT_EVERYWHERE")
expect_cache("${build}" RATELAB_WERROR "OFF")
expect_cache("${build}" RATELAB_BUILD_APP "OFF")
expect_cache("${build}" RATELAB_BUILD_TESTS "OFF")
expect_cache("${build}" RATELAB_INSTALL "OFF")
expect_flag("${commands}" "engine/src/limiter/limiter.cpp" "-DPARENT_EVERYWHERE" TRUE)
expect_flag("${commands}" "engine/src/limiter/limiter.cpp" "-Wall" TRUE)
expect_flag("${commands}" "engine/src/limiter/limiter.cpp" "-Werror" FALSE)
expect_flag("${commands}" "tests/install/consumer/main.cpp" "-Werror" FALSE)
foreach(command IN LISTS commands)
    if(command MATCHES "app/|tests/engine/")
        message(FATAL_ERROR "an embedded ratelab builds more than the engine: ${command}")
    endif()
endforeach()

# No build type: ratelab sets none, and leaves CMake's release flags as CMake made them.
configure_parent(none -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)
expect_cache("${build}" CMAKE_BUILD_TYPE "")
file(STRINGS "${build}/CMakeCache.txt" release REGEX "^CMAKE_CXX_FLAGS_RELEASE:")
if(release MATCHES "-O2")
    message(FATAL_ERROR "ratelab wrote its release flags into the parent's cache: ${release}")
endif()

# Asked for: warnings as errors in ratelab's targets only, and the QHttpServer adapter.
configure_parent(asked -DRATELAB_WERROR=ON -DRATELAB_BUILD_QHTTPSERVER=ON
                       -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)
expect_flag("${commands}" "engine/src/limiter/limiter.cpp" "-Werror" TRUE)
expect_flag("${commands}" "app/qhttpserver/qhttpserver.cpp" "-Werror" TRUE)
expect_flag("${commands}" "tests/install/consumer/main.cpp" "-Werror" FALSE)
