# Sources of loom::io (owned by that area; included by ../../CMakeLists.txt).
# nlohmann-json parses and writes the safetensors header (private: it does
# not appear in loom/io.h).
find_package(nlohmann_json 3.11 REQUIRED)
target_sources(loom PRIVATE
  src/io/safetensors_dtypes.cpp
  src/io/parse.cpp
  src/io/save.cpp
  src/io/load.cpp
  src/io/file_bytes.cpp)
target_link_libraries(loom PRIVATE nlohmann_json::nlohmann_json)
