# install() rules, the CMake package (find_package(limpwatch)) and limpwatch.pc.
include(CMakePackageConfigHelpers)

install(TARGETS limpwatch EXPORT limpwatchTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES hooks/include/limpwatch/limpwatch.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/limpwatch)
install(EXPORT limpwatchTargets NAMESPACE limpwatch:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/limpwatch)

configure_package_config_file(cmake/limpwatchConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/limpwatchConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/limpwatch)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/limpwatchConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${CMAKE_CURRENT_BINARY_DIR}/limpwatchConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/limpwatchConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/limpwatch)

# The flags a traced program needs: instrumentation, and frame pointers so
# callchains stay cheap to walk.
set(LIMPWATCH_PROGRAM_CFLAGS "-finstrument-functions -fno-omit-frame-pointer")
set(LIMPWATCH_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
configure_file(cmake/limpwatch.pc.in ${CMAKE_CURRENT_BINARY_DIR}/limpwatch.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/limpwatch.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# An uninstalled .pc for the build tree, so tests and the test-bed use the
# same flags a PVFS build would, without installing.
set(LIMPWATCH_PC_BUILD_INCLUDE "${CMAKE_CURRENT_SOURCE_DIR}/hooks/include")
set(LIMPWATCH_PC_BUILD_LIBDIR "$<TARGET_FILE_DIR:limpwatch>")
configure_file(cmake/limpwatch-uninstalled.pc.in ${CMAKE_CURRENT_BINARY_DIR}/limpwatch-uninstalled.pc.in @ONLY)
file(GENERATE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig/limpwatch.pc
  INPUT ${CMAKE_CURRENT_BINARY_DIR}/limpwatch-uninstalled.pc.in)
