// Renders an Ollama Modelfile's TEMPLATE with Go's text/template, as Ollama does, for the runtime tests:
// go run ollama_template.go MODELFILE CONVERSATION.json  ->  the rendered prompt on stdout.
// CONVERSATION: [{"role": ..., "content": ...}, ...], given to the template as .Messages.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/template"
)

type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func main() {
	modelfile, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	text := string(modelfile)
	start := strings.Index(text, "TEMPLATE \"\"\"")
	if start < 0 {
		fmt.Fprintln(os.Stderr, "no TEMPLATE \"\"\"...\"\"\" in the Modelfile")
		os.Exit(1)
	}
	body := text[start+len("TEMPLATE \"\"\""):]
	end := strings.Index(body, "\"\"\"")
	if end < 0 {
		fmt.Fprintln(os.Stderr, "TEMPLATE is not closed")
		os.Exit(1)
	}
	tmpl, err := template.New("modelfile").Parse(body[:end])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	raw, err := os.ReadFile(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var messages []Message
	if err := json.Unmarshal(raw, &messages); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := tmpl.Execute(os.Stdout, map[string]any{"Messages": messages}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
