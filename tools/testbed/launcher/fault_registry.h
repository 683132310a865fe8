// The fault injectors by name. Each faults_*.cc file registers its own.
#ifndef LIMPWATCH_TOOLS_TESTBED_LAUNCHER_FAULT_REGISTRY_H_
#define LIMPWATCH_TOOLS_TESTBED_LAUNCHER_FAULT_REGISTRY_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "launcher/fault.h"

namespace limpwatch::testbed::launcher {

class FaultRegistry {
 public:
  using Factory = std::function<std::unique_ptr<Fault>()>;
  void Add(const std::string& name, Factory factory) { factories_[name] = std::move(factory); }
  std::unique_ptr<Fault> Make(const std::string& name) const;
  std::vector<std::string> Names() const;

 private:
  std::map<std::string, Factory> factories_;
};

void RegisterDiskFaults(FaultRegistry* registry);
void RegisterCpuMemoryFaults(FaultRegistry* registry);
void RegisterNetworkFaults(FaultRegistry* registry);
void RegisterProcessFaults(FaultRegistry* registry);
void RegisterStorageErrorFaults(FaultRegistry* registry);
void RegisterRegressionFaults(FaultRegistry* registry);

}  // namespace limpwatch::testbed::launcher

#endif  // LIMPWATCH_TOOLS_TESTBED_LAUNCHER_FAULT_REGISTRY_H_
