# Sources of loom::io (owned by that area; included by ../../CMakeLists.txt).
# nlohmann-json parses and writes the safetensors header (private: it does
# not appear in loom/io.h).
find_package(nlohmann_json 3.11 REQUIRED)
# zlib's crc32 checks and stamps the zip records of PyTorch's checkpoint format.
find_package(ZLIB REQUIRED)
target_sources(loom PRIVATE
  src/io/safetensors_dtypes.cpp
  src/io/parse.cpp
  src/io/save.cpp
  src/io/load.cpp
  src/io/file_bytes.cpp
  src/io/zip_records.cpp
  src/io/torch_checkpoint.cpp)
target_link_libraries(loom PRIVATE nlohmann_json::nlohmann_json ZLIB::ZLIB)
