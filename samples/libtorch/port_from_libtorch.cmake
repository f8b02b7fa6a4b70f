# The mechanical port of a libtorch program to loom, run by the build
# (cmake -DIN=program.cpp -DOUT=ported.cpp -P port_from_libtorch.cmake):
#   #include <torch/torch.h>  ->  #include <loom/loom.h>
#   torch::                   ->  loom::
#   namespace torch           ->  namespace loom   (using namespace torch;)
# and nothing else. A #line directive keeps compiler messages pointing at
# the original file.
file(READ "${IN}" source)
string(REPLACE "#include <torch/torch.h>" "#include <loom/loom.h>" source "${source}")
string(REPLACE "torch::" "loom::" source "${source}")
string(REGEX REPLACE "namespace torch([ ;:])" "namespace loom\\1" source "${source}")
file(WRITE "${OUT}" "#line 1 \"${IN}\"\n${source}")
