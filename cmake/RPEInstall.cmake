# Install rules: headers (with the generated .h.inc), the static libraries,
# the C API and CUDA runtime shared libraries, the tools, and the CMake
# package lib/cmake/rpe/RPEConfig.cmake with exported targets RPE::*.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(RPE_EXPORTED_LIBRARIES
  RPEDialect RPEUtils RPEToLinalg RPETransforms RPEPipelines RPEInitAll
  RPECompiler)
foreach(lib ${RPE_EXPORTED_LIBRARIES})
  target_include_directories(${lib} INTERFACE
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()
target_include_directories(rpe-c INTERFACE
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

# Installed binaries find rpe's shared libraries next to them and libMLIR /
# libLLVM where Debian put them.
set_target_properties(rpe-opt rpe-compile rpe-c PROPERTIES
  INSTALL_RPATH "\$ORIGIN/../${CMAKE_INSTALL_LIBDIR};${LLVM_LIBRARY_DIR}")

# Component "runtime": what running rpe needs (the tools, librpe-c.so that
# the Python package loads, the CUDA runtime); the Python wheel installs only
# it. Component "development": headers, static libraries, CMake package.
install(TARGETS ${RPE_EXPORTED_LIBRARIES} rpe-c rpe_cuda_runtime
                rpe-opt rpe-compile
  EXPORT RPETargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)

# The allocation cache that rpe-compile --emit=shared and rpe.compile link
# into every CPU library: needed at run time, hence "runtime".
install(TARGETS rpe_cpu_runtime
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/rpe
                  ${PROJECT_SOURCE_DIR}/include/rpe-c
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT development
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/rpe
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT development
  FILES_MATCHING PATTERN "*.h.inc" PATTERN "*.cpp.inc"
  PATTERN "CMakeFiles" EXCLUDE)

set(RPE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/rpe)
install(EXPORT RPETargets NAMESPACE RPE::
  DESTINATION ${RPE_INSTALL_CMAKEDIR} COMPONENT development)
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/RPEConfig.cmake.in
  ${PROJECT_BINARY_DIR}/lib/cmake/rpe/RPEConfig.cmake
  INSTALL_DESTINATION ${RPE_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR
            CMAKE_INSTALL_LIBDIR)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/lib/cmake/rpe/RPEConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/lib/cmake/rpe/RPEConfig.cmake
              ${PROJECT_BINARY_DIR}/lib/cmake/rpe/RPEConfigVersion.cmake
  DESTINATION ${RPE_INSTALL_CMAKEDIR} COMPONENT development)
