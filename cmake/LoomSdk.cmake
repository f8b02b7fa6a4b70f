# The SDK half of the install: exported targets, loomConfig.cmake,
# loomConfigVersion.cmake and LoomPlugin.cmake, so that an out-of-tree
# project can write find_package(loom 0.1 REQUIRED) and loom_add_plugin(...).
# Every file here belongs to the `sdk` component.
include(CMakePackageConfigHelpers)

set(LOOM_INSTALL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/loom)
set(LOOM_INSTALL_MANIFEST_DIR ${CMAKE_INSTALL_DATADIR}/loom/plugins)

install(EXPORT loomTargets NAMESPACE loom:: DESTINATION ${LOOM_INSTALL_CMAKE_DIR}
        COMPONENT sdk)

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/loomConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/loomConfig.cmake
  INSTALL_DESTINATION ${LOOM_INSTALL_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR LOOM_INSTALL_MANIFEST_DIR)
# 0.x: any 0.y >= the requested version. Plugins care about the ABI
# (LOOM_ABI_VERSION), not this number; see docs/backend_guide.md.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/loomConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)

install(FILES
  ${CMAKE_BINARY_DIR}/cmake/loomConfig.cmake
  ${CMAKE_BINARY_DIR}/cmake/loomConfigVersion.cmake
  ${CMAKE_CURRENT_LIST_DIR}/LoomPlugin.cmake
  DESTINATION ${LOOM_INSTALL_CMAKE_DIR} COMPONENT sdk)
