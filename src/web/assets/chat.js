// Chat with a record and the research assistant: questions sent to the JSON API, the
// answer streamed in as it is written. Without this script the forms post and the page
// shows the answer when it is complete.
