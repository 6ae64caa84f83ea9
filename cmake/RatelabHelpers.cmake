# Shared build settings for every ratelab target.

# Warnings are errors in ratelab's own code only (RATELAB_WERROR, on at top level), never forced
# on a consumer of the headers nor on a project that embeds ratelab.
function(ratelab_target_defaults target)
    target_compile_options(${target} PRIVATE -Wall -Wextra)
    if(RATELAB_WERROR)
        target_compile_options(${target} PRIVATE -Werror)
    endif()
    if(RATELAB_SANITIZE)
        target_compile_options(${target} PRIVATE -fsanitize=${RATELAB_SANITIZE} -fno-omit-frame-pointer
                                                 -fno-sanitize-recover=all)
        target_link_options(${target} PRIVATE -fsanitize=${RATELAB_SANITIZE})
    endif()
endfunction()

# ratelab_component_headers(<target> <PUBLIC|PRIVATE>)
# An app component's headers are included by their path from app/ ("sim/run/scenario_runner.h"),
# but the include directory a target gets holds its own folder only: a link named after the
# folder, in a directory of its own in the build tree. A target thus sees the headers of the
# components it links and no others (app/ itself would show every component to every target).
function(ratelab_component_headers target scope)
    get_filename_component(folder "${CMAKE_CURRENT_SOURCE_DIR}" NAME)
    set(root "${PROJECT_BINARY_DIR}/include/${folder}")
    if(NOT IS_SYMLINK "${root}/${folder}")
        file(MAKE_DIRECTORY "${root}")
        file(CREATE_LINK "${CMAKE_CURRENT_SOURCE_DIR}" "${root}/${folder}" SYMBOLIC)
    endif()
    target_include_directories(${target} ${scope} $<BUILD_INTERFACE:${root}>)
endfunction()

# ratelab_add_test(<name> LABEL <engine|sim|gui|redis|policy|identity|cli|http>...
#                  SOURCES <files...> [LIBS <targets...>] [TIMEOUT <s>] [ENVIRONMENT <k=v...>]
#                  [CLI] [ARGS <arguments...>])
# Builds a Qt Test executable and registers it with CTest, headless (offscreen platform).
# CLI: the suite runs ratelab-cli (tests/fixtures/cli_fixture.h); RATELAB_CLI names the binary, which is
# built first. Without the ratelab-cli target (RATELAB_BUILD_APP=OFF) such a suite is skipped.
function(ratelab_add_test name)
    cmake_parse_arguments(T "CLI" "TIMEOUT" "LABEL;SOURCES;LIBS;ENVIRONMENT;ARGS" ${ARGN})
    if(T_CLI AND NOT TARGET ratelab-cli)
        return()
    endif()
    if(NOT T_TIMEOUT)
        set(T_TIMEOUT 120)
    endif()
    qt_add_executable(${name} ${T_SOURCES})
    ratelab_target_defaults(${name})
    target_link_libraries(${name} PRIVATE Qt6::Test ${T_LIBS})
    target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
    target_compile_definitions(${name} PRIVATE RATELAB_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
    # Suites find their files through RATELAB_SOURCE_DIR, not QFINDTESTDATA, so Qt Test's
    # QT_TESTCASE_BUILDDIR need not name the build tree: the same value in every tree keeps a
    # suite's compile command the same, and ccache serves a second tree (build_engine_only)
    # from the first.
    set_target_properties(${name} PROPERTIES QT_TESTCASE_BUILDDIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(T_CLI)
        target_compile_definitions(${name} PRIVATE RATELAB_CLI="$<TARGET_FILE:ratelab-cli>")
        add_dependencies(${name} ratelab-cli)
    endif()
    add_test(NAME ${name} COMMAND ${name} ${T_ARGS})
    # Qt Test's own watchdog ends a test function after 300 s; the suite's TIMEOUT is the one
    # bound, so the watchdog follows it (a data row of a sanitized build may take minutes).
    math(EXPR function_timeout_ms "${T_TIMEOUT} * 1000")
    set_tests_properties(${name} PROPERTIES
        LABELS "${T_LABEL}"
        TIMEOUT ${T_TIMEOUT}
        ENVIRONMENT
            "QT_QPA_PLATFORM=offscreen;QTEST_FUNCTION_TIMEOUT=${function_timeout_ms};${T_ENVIRONMENT}")
endfunction()
