# loom_add_plugin(<target> NAME <name> DEVICE_TYPES <t>... [PRIORITY <n>]
#                 SOURCES <src>...)
# Builds a device plugin as a MODULE library against the plugin ABI only and
# writes its manifest beside the others, in the build tree and on install.
function(loom_add_plugin target)
  cmake_parse_arguments(P "" "NAME;PRIORITY" "DEVICE_TYPES;SOURCES" ${ARGN})
  if(NOT P_PRIORITY)
    set(P_PRIORITY 0)
  endif()
  add_library(${target} MODULE ${P_SOURCES})
  target_link_libraries(${target} PRIVATE loom::plugin_api)
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    LIBRARY_OUTPUT_DIRECTORY ${LOOM_PLUGIN_LIB_DIR}
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  loom_write_manifest(${target} NAME ${P_NAME} PRIORITY ${P_PRIORITY}
                      DEVICE_TYPES ${P_DEVICE_TYPES})
  install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/loom/plugins)
  install(FILES ${LOOM_MANIFEST_DIR}/${P_NAME}.json
          DESTINATION ${CMAKE_INSTALL_DATADIR}/loom/plugins)
endfunction()

# Writes <manifest dir>/<name>.json for a plugin target. The library path is
# relative to the manifest: ../../../lib/loom/plugins/lib<target>.so holds in
# the build tree and under an install prefix alike.
function(loom_write_manifest target)
  cmake_parse_arguments(P "" "NAME;PRIORITY;DIR;LIBRARY_PATH" "DEVICE_TYPES" ${ARGN})
  if(NOT P_DIR)
    set(P_DIR ${LOOM_MANIFEST_DIR})
  endif()
  if(NOT P_LIBRARY_PATH)
    set(P_LIBRARY_PATH "../../../${CMAKE_INSTALL_LIBDIR}/loom/plugins/lib${target}.so")
    if(NOT CMAKE_INSTALL_LIBDIR STREQUAL "lib")
      # Build tree always uses lib/; keep one manifest valid for both.
      set(P_LIBRARY_PATH "../../../lib/loom/plugins/lib${target}.so")
    endif()
  endif()
  set(types "")
  foreach(t IN LISTS P_DEVICE_TYPES)
    if(types)
      string(APPEND types ", ")
    endif()
    string(APPEND types "\"${t}\"")
  endforeach()
  file(WRITE ${P_DIR}/${P_NAME}.json
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
endfunction()
