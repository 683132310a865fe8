/* A small shared library for the sampler tests: samples taken while it runs
 * must name it as their image. */
#ifndef LIMPWATCH_TESTS_PROGRAMS_SAMPLED_LIB_H_
#define LIMPWATCH_TESTS_PROGRAMS_SAMPLED_LIB_H_

void lib_burn(long iterations);

#endif /* LIMPWATCH_TESTS_PROGRAMS_SAMPLED_LIB_H_ */
