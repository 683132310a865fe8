#include "server/request_state_machine.h"

#include <cerrno>

#include "server/io_requests.h"
#include "server/metadata_requests.h"

namespace limpwatch::testbed::request {

RequestStateMachine::RequestStateMachine(ServerContext* context, std::shared_ptr<bmi::Connection> connection,
                                         const FrameHeader& header, std::vector<uint8_t> payload)
    : context_(context), connection_(std::move(connection)), header_(header), payload_(std::move(payload)) {}

void RequestStateMachine::Advance() {
  switch (state_) {
    case State::kExecute:
      ExecuteRequest();
      break;
    case State::kFlowDone:
      FinishFlow();
      break;
    case State::kWaitFlow:
    case State::kDone:
      break;
  }
}

void RequestStateMachine::ExecuteRequest() {
  PayloadReader payload(payload_);
  PayloadWriter reply;
  int status = EINVAL;
  switch (header_.operation) {
    case Operation::kPing:
      status = HandlePing(context_, header_, &payload, &reply);
      break;
    case Operation::kCreateDatafile:
      status = HandleCreateDatafile(context_, header_, &payload, &reply);
      break;
    case Operation::kCreateMetafile:
      status = HandleCreateMetafile(context_, header_, &payload, &reply);
      break;
    case Operation::kLookup:
      status = HandleLookup(context_, header_, &payload, &reply);
      break;
    case Operation::kGetattr:
      status = HandleGetattr(context_, header_, &payload, &reply);
      break;
    case Operation::kRemoveMetafile:
      status = HandleRemoveMetafile(context_, header_, &payload, &reply);
      break;
    case Operation::kRemoveDatafile:
      status = HandleRemoveDatafile(context_, header_, &payload, &reply);
      break;
    case Operation::kFsync:
      status = HandleFsync(context_, header_, &payload, &reply);
      break;
    case Operation::kGetSize:
      status = HandleGetSize(context_, header_, &payload, &reply);
      break;
    case Operation::kTruncate:
      status = HandleTruncate(context_, header_, &payload, &reply);
      break;
    case Operation::kWrite:
    case Operation::kRead: {
      uint64_t length = payload.GetU64();
      if (!payload.ok() || length > kMaxTransferLength) {
        // A WRITE whose length we cannot trust leaves the stream unparseable.
        SendResponse(EPROTO, reply);
        state_ = State::kDone;
        return;
      }
      if (header_.operation == Operation::kWrite) {
        StartWriteFlow(length);
      } else {
        StartReadFlow(length);
      }
      return;  // the flow posts this state machine again when it completes
    }
    case Operation::kNone:
      break;
  }
  SendResponse(status, reply);
  state_ = State::kDone;
}

flow::FlowRequest RequestStateMachine::MakeFlowRequest(uint64_t length) {
  flow::FlowRequest request;
  request.connection = connection_;
  request.tag = header_.tag;
  request.handle = header_.handle;
  request.offset = header_.offset;
  request.length = length;
  request.settings = context_->flow_settings;
  request.storage = context_->storage;
  request.on_complete = [self = shared_from_this()] {
    self->state_ = State::kFlowDone;
    self->context_->jobs->Post(self);
  };
  return request;
}

void RequestStateMachine::StartWriteFlow(uint64_t length) {
  int prelude = CheckDatafile(context_, header_.handle);
  state_ = State::kWaitFlow;  // before Start: the flow may complete at once
  write_flow_ = std::make_shared<flow::WriteFlow>(MakeFlowRequest(length));
  if (prelude != 0) {
    write_flow_->StartDiscarding(prelude);  // the client's bytes are on their way: drain them
  } else {
    write_flow_->Start();
  }
}

void RequestStateMachine::StartReadFlow(uint64_t length) {
  int prelude = CheckDatafile(context_, header_.handle);
  if (prelude != 0) {
    PayloadWriter reply;
    SendResponse(prelude, reply);
    state_ = State::kDone;
    return;
  }
  state_ = State::kWaitFlow;
  read_flow_ = std::make_shared<flow::ReadFlow>(MakeFlowRequest(length));
  read_flow_->Start();
}

void RequestStateMachine::FinishFlow() {
  PayloadWriter reply;
  int status;
  if (write_flow_) {
    status = write_flow_->error();
    reply.PutU64(write_flow_->bytes_written());
  } else {
    status = read_flow_->error();
    reply.PutU64(read_flow_->bytes_read());
  }
  SendResponse(status, reply);
  write_flow_.reset();
  read_flow_.reset();
  state_ = State::kDone;
}

void RequestStateMachine::SendResponse(int status, const PayloadWriter& reply) {
  bmi::OutgoingMessage message;
  message.header.kind = FrameKind::kExpectedResponse;
  message.header.operation = header_.operation;
  message.header.tag = header_.tag;
  message.header.handle = header_.handle;
  message.header.offset = header_.offset;
  PayloadWriter body;
  body.PutI32(status);
  body.PutBytes(reply.bytes().data(), reply.bytes().size());
  message.owned_payload = body.Take();
  connection_->Send(std::move(message));
}

}  // namespace limpwatch::testbed::request
