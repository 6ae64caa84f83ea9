# Installs the whole tree from BUILD_DIR into a fresh prefix and checks what a service needs:
# ratelab-cli under bin/ (and that it runs on the installed policies), the schema, policies and
# proxy configurations under share/ratelab/, the systemd unit naming the installed command, and
# a man page that renders.
set(work "${BUILD_DIR}/install-service-test")
set(prefix "${work}/prefix")
file(REMOVE_RECURSE "${work}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}"
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
    message(FATAL_ERROR "cmake --install failed: ${rc}")
endif()
foreach(path
        bin/ratelab-cli
        share/ratelab/schema/policy.schema.json
        share/ratelab/policies/default.json
        share/ratelab/deploy/README.md
        share/ratelab/deploy/nginx/ratelab-server.conf
        share/ratelab/deploy/haproxy/ratelab.lua
        share/ratelab/deploy/traefik/ratelab.yml
        share/ratelab/deploy/envoy/ratelab.yaml
        share/ratelab/deploy/systemd/ratelab.service
        lib/systemd/system/ratelab.service
        share/man/man1/ratelab-cli.1)
    if(NOT EXISTS "${prefix}/${path}")
        message(FATAL_ERROR "not installed: ${path}")
    endif()
endforeach()
if(EXISTS "${prefix}/share/ratelab/deploy/systemd/ratelab.service.in")
    message(FATAL_ERROR "the unit's template was installed beside the unit")
endif()

execute_process(COMMAND "${prefix}/bin/ratelab-cli" validate "${prefix}/share/ratelab/policies/default.json"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc)
    message(FATAL_ERROR "the installed ratelab-cli refused the installed policy: ${out}${err}")
endif()

file(READ "${prefix}/lib/systemd/system/ratelab.service" unit)
foreach(expected "ExecStart=${prefix}/bin/ratelab-cli serve --policy"
                 "ExecReload=/bin/kill -HUP $MAINPID" "KillSignal=SIGTERM")
    string(FIND "${unit}" "${expected}" at)
    if(at EQUAL -1)
        message(FATAL_ERROR "the unit lacks \"${expected}\":\n${unit}")
    endif()
endforeach()
if(unit MATCHES "@[A-Z_]+@")
    message(FATAL_ERROR "the unit has unreplaced placeholders:\n${unit}")
endif()
find_program(systemd_analyze systemd-analyze)
if(systemd_analyze)  # systemd's own check of the unit, where systemd is installed
    execute_process(COMMAND "${systemd_analyze}" verify --man=no "${prefix}/lib/systemd/system/ratelab.service"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(rc)
        message(FATAL_ERROR "systemd-analyze verify refused the unit: ${out}${err}")
    endif()
endif()

execute_process(COMMAND groff -man -Tutf8 -wmac -z "${prefix}/share/man/man1/ratelab-cli.1"
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc OR NOT err STREQUAL "")
    message(FATAL_ERROR "the man page does not render cleanly: ${err}")
endif()
file(READ "${prefix}/share/man/man1/ratelab-cli.1" page)
if(page MATCHES "@[A-Z_]+@")
    message(FATAL_ERROR "the man page has unreplaced placeholders")
endif()
foreach(command serve run replay fit sweep validate export check)
    string(FIND "${page}" "\n.BI \"${command}" at)
    if(at EQUAL -1)
        message(FATAL_ERROR "the man page does not describe ${command}")
    endif()
endforeach()
message(STATUS "installed under ${prefix}")
