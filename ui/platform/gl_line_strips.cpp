#include "ui/platform/gl_line_strips.h"

#define GL_GLEXT_PROTOTYPES
#include <GL/gl.h>
#include <GL/glext.h>

#include <algorithm>

namespace rlwb::ui {
namespace {

// GLSL 1.30, the version ImGui's OpenGL3 backend uses on this platform.
constexpr const char *kVertexShader = R"(#version 130
uniform vec4 transform;  // screen -> clip space: xy scale, zw offset
in vec2 position;
void main() { gl_Position = vec4(position * transform.xy + transform.zw, 0.0, 1.0); }
)";
constexpr const char *kFragmentShader = R"(#version 130
uniform vec4 color;
out vec4 out_color;
void main() { out_color = color; }
)";

GLuint compile(GLenum type, const char *source) {
  GLuint shader = glCreateShader(type);
  glShaderSource(shader, 1, &source, nullptr);
  glCompileShader(shader);
  GLint ok = GL_FALSE;
  glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
  if (ok) return shader;
  glDeleteShader(shader);
  return 0;
}

}  // namespace

bool GlLineStrips::create() {
  GLuint vs = compile(GL_VERTEX_SHADER, kVertexShader),
         fs = compile(GL_FRAGMENT_SHADER, kFragmentShader);
  if (vs && fs) {
    program_ = glCreateProgram();
    glAttachShader(program_, vs);
    glAttachShader(program_, fs);
    glBindAttribLocation(program_, 0, "position");
    glLinkProgram(program_);
    GLint ok = GL_FALSE;
    glGetProgramiv(program_, GL_LINK_STATUS, &ok);
    if (!ok) glDeleteProgram(program_), program_ = 0;
  }
  if (vs) glDeleteShader(vs);
  if (fs) glDeleteShader(fs);
  if (!program_) return false;
  transform_ = glGetUniformLocation(program_, "transform");
  color_ = glGetUniformLocation(program_, "color");
  glGenVertexArrays(1, &vertex_array_);
  glGenBuffers(1, &buffer_);
  GLint previous_array = 0, previous_buffer = 0;
  glGetIntegerv(GL_VERTEX_ARRAY_BINDING, &previous_array);
  glGetIntegerv(GL_ARRAY_BUFFER_BINDING, &previous_buffer);
  glBindVertexArray(vertex_array_);
  glBindBuffer(GL_ARRAY_BUFFER, buffer_);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, sizeof(ImVec2), nullptr);
  glBindVertexArray(static_cast<GLuint>(previous_array));
  glBindBuffer(GL_ARRAY_BUFFER, static_cast<GLuint>(previous_buffer));
  GLfloat widths[2] = {1, 1};
  glGetFloatv(GL_ALIASED_LINE_WIDTH_RANGE, widths);
  max_width_ = std::max(1.0f, widths[1]);
  return true;
}

void GlLineStrips::destroy() {
  if (buffer_) glDeleteBuffers(1, &buffer_);
  if (vertex_array_) glDeleteVertexArrays(1, &vertex_array_);
  if (program_) glDeleteProgram(program_);
  buffer_ = vertex_array_ = program_ = 0;
}

void GlLineStrips::draw(const LayerLines &lines, ImVec2 origin, ImVec2 size) {
  if (!program_ || lines.strips.empty()) return;
  GLint previous_program = 0, previous_array = 0, previous_buffer = 0;
  glGetIntegerv(GL_CURRENT_PROGRAM, &previous_program);
  glGetIntegerv(GL_VERTEX_ARRAY_BINDING, &previous_array);
  glGetIntegerv(GL_ARRAY_BUFFER_BINDING, &previous_buffer);
  GLfloat previous_width = 1;
  glGetFloatv(GL_LINE_WIDTH, &previous_width);
  const GLboolean blend = glIsEnabled(GL_BLEND);

  glUseProgram(program_);
  glBindVertexArray(vertex_array_);
  glBindBuffer(GL_ARRAY_BUFFER, buffer_);
  glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(lines.points.size() * sizeof(ImVec2)),
               lines.points.data(), GL_STREAM_DRAW);
  // The projection ImGui's backend uses: the top row of the rectangle is
  // the top of clip space, so the texture is shown the same way up.
  glUniform4f(transform_, 2.0f / size.x, -2.0f / size.y, -1.0f - 2.0f * origin.x / size.x,
              1.0f + 2.0f * origin.y / size.y);
  glEnable(GL_BLEND);
  glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ONE, GL_ONE_MINUS_SRC_ALPHA);
  glDisable(GL_SCISSOR_TEST);
  for (const LayerLines::Strip &strip : lines.strips) {
    const ImVec4 c = ImGui::ColorConvertU32ToFloat4(strip.color);
    glUniform4f(color_, c.x, c.y, c.z, c.w);
    glLineWidth(std::clamp(strip.thickness, 1.0f, max_width_));
    glDrawArrays(GL_LINE_STRIP, strip.first, strip.count);
  }

  glLineWidth(previous_width);
  if (!blend) glDisable(GL_BLEND);
  glUseProgram(static_cast<GLuint>(previous_program));
  glBindVertexArray(static_cast<GLuint>(previous_array));
  glBindBuffer(GL_ARRAY_BUFFER, static_cast<GLuint>(previous_buffer));
}

}  // namespace rlwb::ui
