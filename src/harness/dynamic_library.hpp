// A shared library loaded at run time (dlopen) and its functions found by name (dlsym), with errors that say
// which library, which symbol and the loader's reason. cuBLAS and NCCL are loaded this way (cublas_loader,
// nccl_loader): memlab and its tests link neither.
#pragma once

#include <dlfcn.h>

#include <stdexcept>
#include <string>

namespace memlab::dynamic_library {

// The loader's reason for the last failure.
inline std::string error() {
  const char* e = dlerror();
  return e != nullptr ? e : "no reason given";
}

// The library, loaded with its symbols resolved now and kept to itself; throws naming it and why.
inline void* open(const std::string& library) {
  void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) throw std::runtime_error("cannot load " + library + ": " + error());
  return lib;
}

// fn = the library's function `symbol`; throws naming both when the library has none.
template <class Fn>
void resolve(void* lib, const std::string& library, const char* symbol, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(lib, symbol));
  if (fn == nullptr) throw std::runtime_error(library + " has no " + symbol + ": " + error());
}

}  // namespace memlab::dynamic_library
