# bench_sampler: sg_sampler_busy under the sampler; the report must put most samples in
# its one busy function.
file(REMOVE ${OUT})
execute_process(COMMAND ${CMAKE_COMMAND} -E env SG_SAMPLER_OUT=${OUT} LD_PRELOAD=${SAMPLER}
                        ${BUSY} 300000000
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "sg_sampler_busy under the sampler exited with ${rc}")
endif()
execute_process(COMMAND ${PYTHON} ${REPORT} ${OUT} 5 RESULT_VARIABLE rc OUTPUT_VARIABLE report)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "sampler_report.py failed (${rc}):\n${report}")
endif()
# the first function line: "PCT%  sg_sampler_busy: sg_sampler_busy_loop"
string(REGEX MATCH "\n *([0-9.]+)%  sg_sampler_busy: sg_sampler_busy_loop\n" hit "${report}")
if(NOT hit OR CMAKE_MATCH_1 LESS 80)
  message(FATAL_ERROR "the busy loop did not take 80% of the samples:\n${report}")
endif()
message(STATUS "busy loop: ${CMAKE_MATCH_1}% of the samples")
