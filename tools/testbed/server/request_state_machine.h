// request: the state machine of one client request (PVFS's server state
// machines, reduced to the states the test-bed's operations need).
//
//   kExecute --(metadata op, fsync, ...)------------------> respond, kDone
//      |
//      +--(READ / WRITE: prelude check, start a flow)--> kWaitFlow
//                                                           | flow completes
//                                                           v  (posted back to the job queue)
//                                                        kFlowDone -> respond, kDone
//
// Created by the poll thread for each unexpected request and posted to the
// job queue; only worker threads advance it.
#ifndef LIMPWATCH_TOOLS_TESTBED_SERVER_REQUEST_STATE_MACHINE_H_
#define LIMPWATCH_TOOLS_TESTBED_SERVER_REQUEST_STATE_MACHINE_H_

#include <memory>
#include <vector>

#include "common/message_codec.h"
#include "common/wire_format.h"
#include "server/bmi_connection.h"
#include "server/job_queue.h"
#include "server/read_flow.h"
#include "server/server_context.h"
#include "server/write_flow.h"

namespace limpwatch::testbed::request {

// Largest READ or WRITE one request may carry.
inline constexpr uint64_t kMaxTransferLength = uint64_t{1} << 30;

class RequestStateMachine : public job::Job, public std::enable_shared_from_this<RequestStateMachine> {
 public:
  RequestStateMachine(ServerContext* context, std::shared_ptr<bmi::Connection> connection, const FrameHeader& header,
                      std::vector<uint8_t> payload);

  void Advance() override;

 private:
  enum class State { kExecute, kWaitFlow, kFlowDone, kDone };

  void ExecuteRequest();
  void StartWriteFlow(uint64_t length);
  void StartReadFlow(uint64_t length);
  void FinishFlow();
  flow::FlowRequest MakeFlowRequest(uint64_t length);
  void SendResponse(int status, const PayloadWriter& reply);

  ServerContext* context_;
  std::shared_ptr<bmi::Connection> connection_;
  FrameHeader header_;
  std::vector<uint8_t> payload_;
  State state_ = State::kExecute;
  std::shared_ptr<flow::WriteFlow> write_flow_;
  std::shared_ptr<flow::ReadFlow> read_flow_;
};

}  // namespace limpwatch::testbed::request

#endif  // LIMPWATCH_TOOLS_TESTBED_SERVER_REQUEST_STATE_MACHINE_H_
