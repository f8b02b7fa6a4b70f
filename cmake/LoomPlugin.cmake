# LoomPlugin.cmake — build a loom device plugin. Used in the loom tree and,
# installed beside loomConfig.cmake, by out-of-tree projects after
# find_package(loom):
#
#   loom_add_plugin(<target> NAME <name> DEVICE_TYPES <type>...
#                   SOURCES <src>... [PRIORITY <n>] [COMPONENT <component>]
#                   [RUNTIME_DIRS <dir>...])
#
# builds <target> as a MODULE library against loom::plugin_api only (hidden
# visibility, no undefined symbols), writes its manifest <name>.json and
# installs both in loom's layout under CMAKE_INSTALL_PREFIX:
#   lib/loom/plugins/lib<target>.so  and  share/loom/plugins/<name>.json
# In the build tree the same layout sits under CMAKE_BINARY_DIR, so
#   LOOM_PLUGIN_PATH=<build>/share/loom/plugins
# finds a plugin that was only built. A plugin installed into loom's own
# prefix is found with no setting at all.
#
# The installed plugin finds the shared libraries it links (a vendor
# runtime) without LD_LIBRARY_PATH: its install RPATH is $ORIGIN (beside the
# plugin), $ORIGIN/../.. (the prefix's lib folder, e.g. a runtime installed
# by the same project), every RUNTIME_DIRS folder (absolute: where a vendor's
# own package puts its runtime), and the folders of libraries it links from
# outside the project. CMake's default would strip the build tree's RPATH at
# install, so a plugin that loads from the build tree would fail installed.
include_guard(GLOBAL)
include(GNUInstallDirs)

# loom_read_abi_version(<plugin_api.h> <out var> [<macro prefix>]): "MAJOR.MINOR"
# as the header declares it (<prefix>_MAJOR / _MINOR; default LOOM_ABI, and
# LOOM_COMM_ABI for comm_api.h), so the version is written in one place only.
function(loom_read_abi_version header out_var)
  set(_prefix LOOM_ABI)
  if(ARGC GREATER 2)
    set(_prefix ${ARGV2})
  endif()
  if(NOT EXISTS "${header}")
    message(FATAL_ERROR "loom: plugin ABI header not found: ${header}")
  endif()
  file(STRINGS "${header}" _major REGEX "^#define ${_prefix}_MAJOR [0-9]+$")
  file(STRINGS "${header}" _minor REGEX "^#define ${_prefix}_MINOR [0-9]+$")
  if(NOT _major OR NOT _minor)
    message(FATAL_ERROR "loom: ${header} does not define ${_prefix}_MAJOR and ${_prefix}_MINOR")
  endif()
  string(REGEX REPLACE ".* ([0-9]+)$" "\\1" _major "${_major}")
  string(REGEX REPLACE ".* ([0-9]+)$" "\\1" _minor "${_minor}")
  set(${out_var} "${_major}.${_minor}" PARENT_SCOPE)
endfunction()

# The MODULE library of a plugin (device or communication), in loom's
# layout, against loom::plugin_api only; sets LOOM_PLUGIN_LIB_DIR and
# LOOM_MANIFEST_DIR in the caller when they were not set.
macro(_loom_plugin_module target where)
  cmake_parse_arguments(_M "" "" "SOURCES;RUNTIME_DIRS" ${ARGN})
  # In the loom tree the top level sets these; out of tree, the same layout
  # under this project's build tree.
  if(NOT LOOM_PLUGIN_LIB_DIR)
    set(LOOM_PLUGIN_LIB_DIR ${CMAKE_BINARY_DIR}/lib/loom/plugins)
  endif()
  if(NOT LOOM_MANIFEST_DIR)
    set(LOOM_MANIFEST_DIR ${CMAKE_BINARY_DIR}/share/loom/plugins)
  endif()
  add_library(${target} MODULE ${_M_SOURCES})
  target_link_libraries(${target} PRIVATE loom::plugin_api)
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    SUFFIX ".so"
    LIBRARY_OUTPUT_DIRECTORY ${LOOM_PLUGIN_LIB_DIR}
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  set(_rpath "$ORIGIN" "$ORIGIN/../..")
  foreach(_dir IN LISTS _M_RUNTIME_DIRS)
    if(NOT IS_ABSOLUTE "${_dir}")
      message(FATAL_ERROR "${where}: RUNTIME_DIRS entry '${_dir}' must be an absolute path")
    endif()
    list(APPEND _rpath "${_dir}")
  endforeach()
  set_target_properties(${target} PROPERTIES INSTALL_RPATH "${_rpath}" INSTALL_RPATH_USE_LINK_PATH ON)
  # A plugin may use nothing of loom but the header-only ABI: a reference to
  # a core symbol fails here, at link time, not when loom loads the plugin.
  target_link_options(${target} PRIVATE LINKER:--no-undefined)
endmacro()

function(loom_add_plugin target)
  cmake_parse_arguments(P "" "NAME;PRIORITY;COMPONENT" "DEVICE_TYPES;SOURCES;RUNTIME_DIRS" ${ARGN})
  set(_where "loom_add_plugin(${target})")
  if(P_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${_where}: unknown arguments: ${P_UNPARSED_ARGUMENTS}")
  endif()
  foreach(_required NAME DEVICE_TYPES SOURCES)
    if(NOT P_${_required})
      message(FATAL_ERROR "${_where}: ${_required} is required")
    endif()
  endforeach()
  # The core accepts only lower-case identifiers as device type names; the
  # plugin name becomes the manifest's file name.
  foreach(_type IN LISTS P_DEVICE_TYPES)
    if(NOT _type MATCHES "^[a-z][a-z0-9_]*$")
      message(FATAL_ERROR "${_where}: device type '${_type}' is not a lower-case "
                          "identifier ([a-z][a-z0-9_]*)")
    endif()
  endforeach()
  if(NOT P_NAME MATCHES "^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
    message(FATAL_ERROR "${_where}: NAME '${P_NAME}' must be a plain file name "
                        "(letters, digits, '_', '.', '-')")
  endif()
  if(NOT DEFINED P_PRIORITY)
    set(P_PRIORITY 0)
  endif()
  if(NOT P_PRIORITY MATCHES "^-?[0-9]+$")
    message(FATAL_ERROR "${_where}: PRIORITY must be an integer, got '${P_PRIORITY}'")
  endif()
  if(NOT P_COMPONENT)
    set(P_COMPONENT ${P_NAME})
  endif()
  if(NOT TARGET loom::plugin_api)
    message(FATAL_ERROR "${_where}: loom::plugin_api is not defined; call find_package(loom) first")
  endif()
  if(NOT LOOM_ABI_VERSION)
    message(FATAL_ERROR "${_where}: LOOM_ABI_VERSION is not set; call find_package(loom) first")
  endif()
  # In the loom tree the top level sets these; out of tree, the same layout
  # under this project's build tree.
  _loom_plugin_module(${target} "${_where}" SOURCES ${P_SOURCES} RUNTIME_DIRS ${P_RUNTIME_DIRS})

  # Build tree: the manifest beside the others, pointing at the build output.
  loom_write_manifest(${target} NAME ${P_NAME} PRIORITY ${P_PRIORITY}
    DEVICE_TYPES ${P_DEVICE_TYPES} DIR ${LOOM_MANIFEST_DIR} LIB_DIR ${LOOM_PLUGIN_LIB_DIR})
  # Install tree: share/loom/plugins -> lib/loom/plugins (GNUInstallDirs
  # may make the two differ from the build tree, e.g. lib/x86_64-linux-gnu).
  set(_root /loom_prefix)
  file(RELATIVE_PATH _install_rel ${_root}/${CMAKE_INSTALL_DATADIR}/loom/plugins
       ${_root}/${CMAKE_INSTALL_LIBDIR}/loom/plugins/lib${target}.so)
  set(_install_dir ${CMAKE_CURRENT_BINARY_DIR}/loom_install_manifests)
  loom_write_manifest(${target} NAME ${P_NAME} PRIORITY ${P_PRIORITY}
    DEVICE_TYPES ${P_DEVICE_TYPES} DIR ${_install_dir} LIBRARY_PATH ${_install_rel})

  install(TARGETS ${target}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/loom/plugins COMPONENT ${P_COMPONENT})
  install(FILES ${_install_dir}/${P_NAME}.json
          DESTINATION ${CMAKE_INSTALL_DATADIR}/loom/plugins COMPONENT ${P_COMPONENT})
endfunction()

# loom_write_manifest(<target> NAME <name> DEVICE_TYPES <type>... [PRIORITY <n>]
#                     [DIR <manifest dir>] [LIBRARY_PATH <path> | LIB_DIR <dir>])
# Writes <DIR>/<name>.json in the registry's format (file_format 1.0) for
# the plugin library lib<target>.so. LIBRARY_PATH is taken as written
# (relative to the manifest); otherwise it is the path from DIR to
# LIB_DIR/lib<target>.so. DIR and LIB_DIR default to the build tree's
# LOOM_MANIFEST_DIR and LOOM_PLUGIN_LIB_DIR.
function(loom_write_manifest target)
  cmake_parse_arguments(P "" "NAME;PRIORITY;DIR;LIB_DIR;LIBRARY_PATH" "DEVICE_TYPES" ${ARGN})
  foreach(_required NAME DEVICE_TYPES)
    if(NOT P_${_required})
      message(FATAL_ERROR "loom_write_manifest(${target}): ${_required} is required")
    endif()
  endforeach()
  if(NOT DEFINED P_PRIORITY)
    set(P_PRIORITY 0)
  endif()
  if(NOT P_DIR)
    set(P_DIR ${LOOM_MANIFEST_DIR})
  endif()
  if(NOT P_LIB_DIR)
    set(P_LIB_DIR ${LOOM_PLUGIN_LIB_DIR})
  endif()
  if(NOT P_LIBRARY_PATH)
    file(RELATIVE_PATH P_LIBRARY_PATH ${P_DIR} ${P_LIB_DIR}/lib${target}.so)
  endif()
  set(types "")
  foreach(t IN LISTS P_DEVICE_TYPES)
    if(types)
      string(APPEND types ", ")
    endif()
    string(APPEND types "\"${t}\"")
  endforeach()
  set(content
"{
  \"file_format_version\": \"1.0\",
  \"plugin\": {
    \"name\": \"${P_NAME}\",
    \"library_path\": \"${P_LIBRARY_PATH}\",
    \"abi_version\": \"${LOOM_ABI_VERSION}\",
    \"device_types\": [${types}],
    \"priority\": ${P_PRIORITY}
  }
}
")
  # Rewrite only on change, so a re-configure does not touch the file.
  file(CONFIGURE OUTPUT ${P_DIR}/${P_NAME}.json CONTENT "${content}" @ONLY)
endfunction()

# loom_add_comm_plugin(<target> NAME <name> BACKENDS <backend>... SOURCES <src>...
#                      [PRIORITY <n>] [COMPONENT <component>] [RUNTIME_DIRS <dir>...])
# builds a communication plugin (loom/comm_api.h: collectives for one device
# type's tensors, exporting loom_comm_plugin_entry) the way loom_add_plugin
# builds a device plugin, and writes its manifest, which lists
# "comm_backends" (the names init_process_group takes) and the
# communication ABI version, with no device types.
function(loom_add_comm_plugin target)
  cmake_parse_arguments(P "" "NAME;PRIORITY;COMPONENT" "BACKENDS;SOURCES;RUNTIME_DIRS" ${ARGN})
  set(_where "loom_add_comm_plugin(${target})")
  foreach(_required NAME BACKENDS SOURCES)
    if(NOT P_${_required})
      message(FATAL_ERROR "${_where}: ${_required} is required")
    endif()
  endforeach()
  foreach(_b IN LISTS P_BACKENDS)
    if(NOT _b MATCHES "^[a-z][a-z0-9_]*$")
      message(FATAL_ERROR "${_where}: backend '${_b}' is not a lower-case identifier ([a-z][a-z0-9_]*)")
    endif()
  endforeach()
  if(NOT DEFINED P_PRIORITY)
    set(P_PRIORITY 0)
  endif()
  if(NOT P_COMPONENT)
    set(P_COMPONENT ${P_NAME})
  endif()
  if(NOT LOOM_COMM_ABI_VERSION)
    message(FATAL_ERROR "${_where}: LOOM_COMM_ABI_VERSION is not set; call find_package(loom) first")
  endif()
  _loom_plugin_module(${target} "${_where}" SOURCES ${P_SOURCES} RUNTIME_DIRS ${P_RUNTIME_DIRS})
  set(_backends "")
  foreach(_b IN LISTS P_BACKENDS)
    if(_backends)
      string(APPEND _backends ", ")
    endif()
    string(APPEND _backends "\"${_b}\"")
  endforeach()
  set(_root /loom_prefix)
  file(RELATIVE_PATH _install_rel ${_root}/${CMAKE_INSTALL_DATADIR}/loom/plugins
       ${_root}/${CMAKE_INSTALL_LIBDIR}/loom/plugins/lib${target}.so)
  file(RELATIVE_PATH _build_rel ${LOOM_MANIFEST_DIR} ${LOOM_PLUGIN_LIB_DIR}/lib${target}.so)
  set(_install_dir ${CMAKE_CURRENT_BINARY_DIR}/loom_install_manifests)
  foreach(_pair "${LOOM_MANIFEST_DIR}|${_build_rel}" "${_install_dir}|${_install_rel}")
    string(REPLACE "|" ";" _pair "${_pair}")
    list(GET _pair 0 _dir)
    list(GET _pair 1 _lib)
    file(CONFIGURE OUTPUT ${_dir}/${P_NAME}.json CONTENT "{
  \"file_format_version\": \"1.0\",
  \"plugin\": {
    \"name\": \"${P_NAME}\",
    \"library_path\": \"${_lib}\",
    \"abi_version\": \"${LOOM_COMM_ABI_VERSION}\",
    \"comm_backends\": [${_backends}],
    \"priority\": ${P_PRIORITY}
  }
}
" @ONLY)
  endforeach()
  install(TARGETS ${target}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/loom/plugins COMPONENT ${P_COMPONENT})
  install(FILES ${_install_dir}/${P_NAME}.json
          DESTINATION ${CMAKE_INSTALL_DATADIR}/loom/plugins COMPONENT ${P_COMPONENT})
endfunction()
