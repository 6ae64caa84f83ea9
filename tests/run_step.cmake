# For the CTest scripts that drive CMake, a compiler or the programs they build (tests/install/,
# tests/embed/): run_step(WHAT COMMAND...) runs one step and fails the test with the step's
# output when it exits non-zero; afterwards `output` holds its standard output.
function(run_step what)
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(rc)
        message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
    endif()
    set(output "${out}" PARENT_SCOPE)
endfunction()
