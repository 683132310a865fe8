#include "limpwatch/shm/segment.h"

#include <boost/interprocess/exceptions.hpp>
#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/permissions.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <sys/mman.h>
#include <time.h>

#include <cerrno>
#include <cstring>

namespace limpwatch::shm {

namespace bip = boost::interprocess;

namespace {

void CopyName(char (&destination)[kNameSize], const std::string& source) {
  size_t length = std::min(source.size(), kNameSize - 1);
  std::memcpy(destination, source.data(), length);
  destination[length] = '\0';
}

uint64_t RealtimeNs() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return uint64_t(now.tv_sec) * 1000000000ull + uint64_t(now.tv_nsec);
}

}  // namespace

struct SegmentWriter::Mapping {
  bip::shared_memory_object object;
  bip::mapped_region region;
};

struct SegmentReader::Mapping {
  bip::shared_memory_object object;
  bip::mapped_region region;
};

std::unique_ptr<SegmentWriter> SegmentWriter::Create(const std::string& object_name, const Geometry& geometry,
                                                     const OwnerInfo& owner, std::string* error) {
  Layout layout;
  if (!ComputeLayout(geometry, &layout)) {
    *error = "segment '" + object_name + "': geometry out of bounds";
    return nullptr;
  }
  std::unique_ptr<SegmentWriter> writer(new SegmentWriter());
  bool created = false;
  try {
    bip::permissions owner_only(0600);
    auto mapping = std::make_unique<Mapping>();
    mapping->object = bip::shared_memory_object(bip::create_only, object_name.c_str(), bip::read_write, owner_only);
    created = true;
    mapping->object.truncate(static_cast<bip::offset_t>(layout.segment_size));
    mapping->region = bip::mapped_region(mapping->object, bip::read_write, 0, layout.segment_size);
    writer->mapping_ = std::move(mapping);
  } catch (const bip::interprocess_exception& e) {
    if (created) bip::shared_memory_object::remove(object_name.c_str());
    *error = "segment '" + object_name + "': cannot create: " + e.what();
    return nullptr;
  }
  writer->object_name_ = object_name;
  writer->size_ = layout.segment_size;

  auto* h = static_cast<SegmentHeader*>(writer->mapping_->region.get_address());
  // The object is new and zero-filled; fill the header, then publish.
  h->magic = kSegmentMagic;
  h->version_major = kVersionMajor;
  h->version_minor = kVersionMinor;
  h->endian_mark = kEndianMark;
  h->header_size = kHeaderSize;
  h->segment_size = layout.segment_size;
  h->owner_pid = static_cast<uint32_t>(owner.pid);
  h->parent_pid = static_cast<uint32_t>(owner.parent_pid);
  h->owner_start_time = ProcessStartTime(owner.pid);
  h->created_realtime_ns = RealtimeNs();
  CopyName(h->name, owner.name);
  CopyName(h->program, owner.program);
  h->clock_source = static_cast<uint32_t>(owner.clock_source);
  h->ns_per_tick = owner.ns_per_tick;
  h->clock_ref_ticks = owner.clock_ref_ticks;
  h->clock_ref_realtime_ns = owner.clock_ref_realtime_ns;
  h->max_functions = geometry.max_functions;
  h->function_index_capacity = layout.function_index_capacity;
  h->max_threads = geometry.max_threads;
  h->stack_depth = geometry.stack_depth;
  h->alarm_capacity = geometry.alarm_capacity;
  h->thread_slot_size = static_cast<uint32_t>(layout.thread_slot_size);
  h->sizeof_symbol_entry = sizeof(SymbolEntry);
  h->sizeof_function_counters = sizeof(FunctionCounters);
  h->sizeof_stack_frame = sizeof(StackFrame);
  h->sizeof_thread_slot_header = sizeof(ThreadSlotHeader);
  h->sizeof_node_metrics = sizeof(NodeMetricsRecord);
  h->sizeof_alarm_record = sizeof(AlarmRecord);
  h->sizeof_io_block = sizeof(IoBlock);
  h->sizeof_sampled_function = sizeof(SampledFunction);
  h->sample_capacity = layout.sample_capacity;
  h->function_index = layout.function_index;
  h->symbols = layout.symbols;
  h->threads = layout.threads;
  h->retired = layout.retired;
  h->node_metrics = layout.node_metrics;
  h->alarms = layout.alarms;
  h->samples = layout.samples;
  h->flow_events_per_thread = layout.flow_events_per_thread;
  auto* flows = reinterpret_cast<FlowRegionDescriptor*>(reinterpret_cast<uint8_t*>(h) + kFlowRegionOffset);
  flows->region = layout.flows;
  flows->events_per_thread = layout.flow_events_per_thread;
  flows->max_flow_events = layout.max_flow_events;
  writer->view_ = SegmentView(h);
  h->owner_state.store(static_cast<uint32_t>(OwnerState::kRunning), std::memory_order_release);
  return writer;
}

SegmentWriter::~SegmentWriter() = default;

void SegmentWriter::Remove() { bip::shared_memory_object::remove(object_name_.c_str()); }

bool SegmentWriter::Republish(std::string* error) {
  void* base = mapping_->region.get_address();
  try {
    bip::permissions owner_only(0600);
    bip::shared_memory_object object(bip::create_only, object_name_.c_str(), bip::read_write, owner_only);
    try {
      object.truncate(static_cast<bip::offset_t>(size_));
      {
        bip::mapped_region copy(object, bip::read_write, 0, size_);
        std::memcpy(copy.get_address(), base, size_);
      }
      int fd = object.get_mapping_handle().handle;
      if (mmap(base, size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
        *error = "segment '" + object_name_ + "': cannot map it again: " + std::strerror(errno);
        bip::shared_memory_object::remove(object_name_.c_str());
        return false;
      }
    } catch (const bip::interprocess_exception&) {
      bip::shared_memory_object::remove(object_name_.c_str());
      throw;
    }
    mapping_->object.swap(object);
  } catch (const bip::interprocess_exception& e) {
    *error = "segment '" + object_name_ + "': cannot publish it again: " + e.what();
    return false;
  }
  return true;
}

std::unique_ptr<SegmentReader> SegmentReader::Open(const std::string& object_name, std::string* error) {
  std::unique_ptr<SegmentReader> reader(new SegmentReader());
  auto mapping = std::make_unique<Mapping>();
  bip::offset_t size = 0;
  try {
    mapping->object = bip::shared_memory_object(bip::open_only, object_name.c_str(), bip::read_only);
    if (!mapping->object.get_size(size)) {
      *error = "segment '" + object_name + "': cannot read its size";
      return nullptr;
    }
    if (size <= 0) {
      *error = "segment '" + object_name + "': truncated: 0 bytes";
      return nullptr;
    }
    mapping->region = bip::mapped_region(mapping->object, bip::read_only, 0, static_cast<size_t>(size));
  } catch (const bip::interprocess_exception& e) {
    *error = "segment '" + object_name + "': cannot open: " + e.what();
    return nullptr;
  }
  std::string problem = ValidateSegment(mapping->region.get_address(), static_cast<uint64_t>(size));
  if (!problem.empty()) {
    *error = "segment '" + object_name + "': " + problem;
    return nullptr;
  }
  reader->view_ = SegmentView(mapping->region.get_address());
  reader->mapping_ = std::move(mapping);
  reader->object_name_ = object_name;
  reader->size_ = static_cast<uint64_t>(size);
  return reader;
}

SegmentReader::~SegmentReader() = default;

bool RemoveSegmentObject(const std::string& object_name, std::string* error) {
  if (!bip::shared_memory_object::remove(object_name.c_str())) {
    *error = "segment '" + object_name + "': cannot remove: " + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace limpwatch::shm

#if defined(__SANITIZE_THREAD__)
// Boost.Interprocess caches the page size in a template static that this
// file's static initialisation writes. That initialisation has no priority,
// so it runs after the runtime's threads started (priority 105), and one of
// them may already have read the cache, which falls back to sysconf() while
// it is still 0: the same value either way. ThreadSanitizer is told so by
// address, before any thread starts; a suppression by name would make it
// symbolize the stack inside the program's thread, and its symbolizer's
// file reads would be counted as the program's I/O.
extern "C" void AnnotateBenignRaceSized(const char* file, int line, const volatile void* address, long size,
                                        const char* description);

namespace limpwatch::shm {
namespace {

// An explicit instantiation may name a private member ([temp.explicit]): the
// friend it defines hands out the cache's address.
template <const std::size_t* Cache>
struct ExposePageSizeCache {
  friend const std::size_t* PageSizeCacheAddress() { return Cache; }
};
const std::size_t* PageSizeCacheAddress();
template struct ExposePageSizeCache<&bip::mapped_region::page_size_holder<0>::PageSize>;

[[gnu::constructor(101)]] void DeclarePageSizeCacheBenign() {
  AnnotateBenignRaceSized(__FILE__, __LINE__, PageSizeCacheAddress(), sizeof(std::size_t),
                          "Boost.Interprocess page size cache, written by static initialisation");
}

}  // namespace
}  // namespace limpwatch::shm
#endif
