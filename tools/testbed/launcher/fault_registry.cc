#include "launcher/fault_registry.h"

namespace limpwatch::testbed::launcher {
namespace {

const FaultRegistry& Registry() {
  static const FaultRegistry registry = [] {
    FaultRegistry all;
    RegisterDiskFaults(&all);
    RegisterCpuMemoryFaults(&all);
    RegisterNetworkFaults(&all);
    RegisterProcessFaults(&all);
    RegisterStorageErrorFaults(&all);
    RegisterRegressionFaults(&all);
    return all;
  }();
  return registry;
}

}  // namespace

std::unique_ptr<Fault> FaultRegistry::Make(const std::string& name) const {
  auto factory = factories_.find(name);
  return factory == factories_.end() ? nullptr : factory->second();
}

std::vector<std::string> FaultRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, factory] : factories_) names.push_back(name);
  return names;
}

std::unique_ptr<Fault> MakeFault(const std::string& name) { return Registry().Make(name); }
std::vector<std::string> FaultNames() { return Registry().Names(); }

}  // namespace limpwatch::testbed::launcher
