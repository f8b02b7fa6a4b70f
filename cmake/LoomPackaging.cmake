# CPack: one package per install component.
#   runtime  libloom_core, libloom_registry, libloom, loom-info, and the
#            manifest directory share/loom/plugins that plugin packages fill
#   sdk      headers, loomConfig.cmake, LoomPlugin.cmake     (needs runtime)
#   cpu      the cpu plugin and its manifest                  (needs runtime)
#   cuda/hip/gloo/nccl declared; packaged only when those plugins are built
#            (gloo, nccl: the communication plugins of loom.distributed)
#   python   the `loom` Python package                        (needs runtime, cpu)
# A plugin package puts its manifest into the runtime's manifest directory,
# which the registry searches relative to libloom_registry.so, so installing
# it is all it takes for loom-info to list it.
#   cpack -G DEB   (in the build dir) -> loom-runtime_0.1.0_amd64.deb, ...
#   cpack -G TGZ                      -> loom-0.1.0-Linux-runtime.tar.gz, ...
set(CPACK_PACKAGE_NAME loom)
set(CPACK_PACKAGE_VENDOR "the loom project")
set(CPACK_PACKAGE_CONTACT "loom maintainers <loom@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "PyTorch-style tensor library whose devices are plugins")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR TGZ)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_ARCHIVE_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)  # loom-cpu Depends: loom-runtime (= 0.1.0)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# System libraries (libstdc++, libgomp, oneDNN) come from dpkg-shlibdeps;
# loom's own libraries are found in the staging tree through -l.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${LOOM_LIB_DIR})
# The Python extension links libloom from another package (loom-runtime, a
# component dependency), which dpkg-shlibdeps has no shlibs entry for; name
# the interpreter it was built for instead.
set(CPACK_DEBIAN_PYTHON_PACKAGE_SHLIBDEPS OFF)
if(LOOM_PYTHON_VERSION)
  set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS "python${LOOM_PYTHON_VERSION}, libc6, libstdc++6")
endif()

set(CPACK_COMPONENTS_ALL runtime sdk cpu)
foreach(_plugin cuda hip gloo nccl)
  if(TARGET loom_${_plugin})
    list(APPEND CPACK_COMPONENTS_ALL ${_plugin})
  endif()
endforeach()
if(LOOM_BUILD_PYTHON)
  list(APPEND CPACK_COMPONENTS_ALL python)
endif()

include(CPack)

cpack_add_component(runtime DISPLAY_NAME "loom runtime"
  DESCRIPTION "The core, the plugin registry, the C++ API library and loom-info")
cpack_add_component(sdk DISPLAY_NAME "loom SDK" DEPENDS runtime
  DESCRIPTION "Headers, the plugin ABI and CMake files (find_package(loom), loom_add_plugin)")
cpack_add_component(cpu DISPLAY_NAME "loom cpu plugin" DEPENDS runtime
  DESCRIPTION "The CPU device (oneDNN, OpenMP)")
cpack_add_component(cuda DISPLAY_NAME "loom cuda plugin" DEPENDS runtime
  DESCRIPTION "The CUDA device")
cpack_add_component(hip DISPLAY_NAME "loom hip plugin" DEPENDS runtime
  DESCRIPTION "The HIP device")
cpack_add_component(gloo DISPLAY_NAME "loom gloo communication plugin" DEPENDS runtime
  DESCRIPTION "Collectives on cpu tensors for loom.distributed (Gloo over TCP)")
cpack_add_component(nccl DISPLAY_NAME "loom nccl communication plugin" DEPENDS runtime cuda
  DESCRIPTION "Collectives on cuda tensors for loom.distributed (NVIDIA NCCL)")
cpack_add_component(python DISPLAY_NAME "loom for Python" DEPENDS runtime cpu
  DESCRIPTION "The loom Python package")
