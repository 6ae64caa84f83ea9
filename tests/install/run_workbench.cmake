# Installs the whole tree from BUILD_DIR into a fresh prefix and checks what a desktop user
# gets: the workbench under bin/, the scenarios and the policies they name under share/ratelab/
# in the source tree's layout (so a scenario's "../resources/policies/..." resolves), README.md
# and docs/ for Help; the installed ratelab-cli runs an installed scenario, and the installed
# workbench starts, runs and draws itself offscreen.
set(work "${BUILD_DIR}/install-workbench-test")
set(prefix "${work}/prefix")
file(REMOVE_RECURSE "${work}")
include(${CMAKE_CURRENT_LIST_DIR}/../run_step.cmake)
run_step("cmake --install" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}")
foreach(path
        bin/ratelab
        share/ratelab/scenarios/header-rotation.json
        share/ratelab/scenarios/policies/login-failures.json
        share/ratelab/resources/policies/default.json
        share/ratelab/README.md
        share/ratelab/docs/ARCHITECTURE.md
        share/ratelab/docs/workbench.png)
    if(NOT EXISTS "${prefix}/${path}")
        message(FATAL_ERROR "not installed: ${path}")
    endif()
endforeach()
if(EXISTS "${prefix}/share/ratelab/docs/ratelab-cli.1")
    message(FATAL_ERROR "the man page's template was installed beside the docs")
endif()

# Every installed scenario runs with the policy it names, from the installed tree, and meets
# its expectations.
file(GLOB scenarios "${prefix}/share/ratelab/scenarios/*.json")
list(LENGTH scenarios count)
if(count LESS 10)
    message(FATAL_ERROR "only ${count} scenarios installed")
endif()
foreach(scenario ${scenarios})
    run_step("the installed ratelab-cli on ${scenario}" "${prefix}/bin/ratelab-cli" run
             "${scenario}" --quiet --json "${work}/report.json")
endforeach()

set(ENV{QT_QPA_PLATFORM} offscreen)
run_step("the installed workbench" "${prefix}/bin/ratelab" --run --speed max --quit-after 1
         --screenshot "${work}/shot.png")
if(NOT EXISTS "${work}/shot.png")
    message(FATAL_ERROR "the installed workbench drew no screenshot")
endif()
