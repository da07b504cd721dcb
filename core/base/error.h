#pragma once
// hr::Error: the one exception type of core/. Its message is written for a person: what was wrong,
// and what to do about it. Errors a person will read carry a Message (base/message.h) with a stable
// id, so app/ can show them translated; what() is always the English text.
#include <stdexcept>
#include <string>
#include <vector>

#include "base/message.h"

namespace hr {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message), message_(Message::plain(message)) {}
    Error(MessageText text, std::vector<std::string> args = {})
        : Error(Message(text, std::move(args))) {}
    explicit Error(Message m) : std::runtime_error(m.english()), message_(std::move(m)) {}

    // The message with its id and arguments (id empty for plain English errors).
    const Message& message() const { return message_; }

private:
    Message message_;
};

// Bad input from the user (flag, file, spec, dataset, checkpoint): the CLI exits with code 2.
class InputError : public Error {
public:
    using Error::Error;
};

// The run was cancelled through the trainer's cancel flag.
class Cancelled : public Error {
public:
    Cancelled() : Error(HR_MSG("run.stopped", "training was stopped")) {}
};

}  // namespace hr
