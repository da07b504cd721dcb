#pragma once
// hr::Error: the one exception type of core/. Its message is written for a person:
// what was wrong, and what to do about it.
#include <stdexcept>
#include <string>

namespace hr {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Bad input from the user (flag, file, spec, dataset, checkpoint): the CLI exits with code 2.
class InputError : public Error {
public:
    explicit InputError(const std::string& message) : Error(message) {}
};

// The run was cancelled through the trainer's cancel flag.
class Cancelled : public Error {
public:
    Cancelled() : Error("training was stopped") {}
};

}  // namespace hr
