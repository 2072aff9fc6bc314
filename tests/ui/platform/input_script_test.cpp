// The scripted input that drives rlwb-gui in tests, the PNG writer/reader,
// and the canvas's zoom math.
#include "ui/platform/input_script.h"

#include <gtest/gtest.h>

#include <chrono>

#include "ui/graph/canvas_view.h"
#include "ui/platform/png.h"
#include "tests/ui/ui_test_support.h"

namespace rlwb::ui {
namespace {

TEST(ParseScript, ReadsEveryCommandAndSkipsComments) {
  auto cmds = parse_script(
      "# open and drag\nclick @button/Save\ndrag @pin/a/out/x @pin/b/in/+ ctrl steps=4\n"
      "drag 10,20 +30,-5 right\nkey ctrl+shift+z\ntext hello world  \nwait @plot/x 2000\n"
      "scroll @canvas -2\nframes 3\nsleep 10\nscreenshot a.png\nclick @\"button/Start run\"\n");
  ASSERT_EQ(cmds.size(), 11u);
  EXPECT_EQ(cmds[10].pos[0].item, "button/Start run");
  EXPECT_EQ(cmds[0].kind, ScriptCommand::Kind::click);
  EXPECT_EQ(cmds[0].pos[0].item, "button/Save");
  EXPECT_TRUE(cmds[1].ctrl);
  EXPECT_EQ(cmds[1].count, 4);
  EXPECT_EQ(cmds[2].pos[1].kind, ScriptPos::Kind::relative);
  EXPECT_EQ(cmds[2].pos[1].y, -5);
  EXPECT_EQ(cmds[2].button, 1);
  EXPECT_TRUE(cmds[3].ctrl && cmds[3].shift);
  EXPECT_EQ(cmds[4].text, "hello world");
  EXPECT_EQ(cmds[5].count, 2000);
  EXPECT_EQ(cmds[6].wheel, -2);
}

TEST(ParseScript, ErrorsNameTheLine) {
  try {
    parse_script("frames 1\nclick\n");
    FAIL();
  } catch (const ScriptError& e) {
    EXPECT_NE(std::string(e.what()).find("script:2:"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_script("key hyper+q\n"), ScriptError);
  EXPECT_THROW(parse_script("fly 1,2\n"), ScriptError);
  EXPECT_THROW(parse_script("move +1,2\n"), ScriptError);  // relative only for a drag's end
}

TEST(ScriptPlayer, AClickHoversPressesAndReleasesAtTheItemsCentre) {
  ItemRegistry registry;
  registry.record("button/Save", ImVec2(10, 10), ImVec2(30, 20));
  registry.begin_frame();
  ScriptPlayer player(parse_script("click @button/Save~1,2\n"));
  std::vector<ScriptFrame> frames;
  while (auto f = player.next_frame(registry)) frames.push_back(*f);
  ASSERT_GE(frames.size(), 3u);
  EXPECT_FLOAT_EQ(frames[0].mouse.x, 21);
  EXPECT_FLOAT_EQ(frames[0].mouse.y, 17);
  EXPECT_FALSE(frames[0].buttons[0]);
  EXPECT_TRUE(frames[1].buttons[0]);
  EXPECT_FALSE(frames[2].buttons[0]);
  EXPECT_TRUE(player.done());
}

// `close` asks once: the frames after it do not ask again.
TEST(ScriptPlayer, CloseAsksTheWindowToCloseInOneFrame) {
  ItemRegistry registry;
  ScriptPlayer player(parse_script("move 5,5\nclose\nframes 3\n"));
  std::vector<ScriptFrame> frames;
  while (auto f = player.next_frame(registry)) frames.push_back(*f);
  ASSERT_EQ(frames.size(), 5u);
  int asking = 0;
  for (const auto& f : frames) asking += f.close;
  EXPECT_EQ(asking, 1);
  EXPECT_TRUE(frames[1].close);
  EXPECT_FLOAT_EQ(frames[4].mouse.x, 5) << "the pointer stays where it was";
  EXPECT_THROW(parse_script("clos\n"), ScriptError);
}

TEST(ScriptPlayer, ADragHoldsTheButtonAllTheWay) {
  ItemRegistry registry;
  ScriptPlayer player(parse_script("drag 0,0 +100,50 steps=5\n"));
  std::vector<ScriptFrame> frames;
  while (auto f = player.next_frame(registry)) frames.push_back(*f);
  int held = 0;
  for (const auto& f : frames) held += f.buttons[0];
  EXPECT_GE(held, 6);
  EXPECT_FLOAT_EQ(frames[frames.size() - 2].mouse.x, 100);
  EXPECT_FALSE(frames.back().buttons[0]);
}

TEST(ScriptPlayer, WaitFailsWithTheItemsThatWereOnScreen) {
  ItemRegistry registry;
  registry.record("tab/Runs", ImVec2(0, 0), ImVec2(5, 5));
  registry.begin_frame();
  ScriptPlayer player(parse_script("wait @plot/nothing 30\n"));
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  try {
    while (std::chrono::steady_clock::now() < give_up) player.next_frame(registry);
    FAIL() << "wait never failed";
  } catch (const ScriptError& e) {
    EXPECT_NE(std::string(e.what()).find("tab/Runs"), std::string::npos);
  }
}

TEST(Png, WritesAndReadsBack) {
  Image image;
  image.width = 7, image.height = 5;
  for (int i = 0; i < 35; ++i) {
    uint8_t v = static_cast<uint8_t>(i * 7);
    image.rgba.insert(image.rgba.end(), {v, static_cast<uint8_t>(255 - v), static_cast<uint8_t>(i), 255});
  }
  std::string path =
      std::filesystem::temp_directory_path() / ("rlwb-png-" + std::to_string(getpid()) + ".png");
  write_png(path, image);
  Image back = read_png(path);
  std::filesystem::remove(path);
  EXPECT_EQ(back.width, 7);
  EXPECT_EQ(back.height, 5);
  EXPECT_EQ(back.rgba, image.rgba);
  EXPECT_THROW(read_png("/nonexistent.png"), PngError);
}

TEST(CanvasView, ZoomKeepsThePointUnderTheCursorAndFrameFitsTheBox) {
  CanvasView view;
  ImVec2 origin(100, 50), cursor(400, 300);
  ImVec2 before = view.to_world(cursor, origin);
  view.zoom_at(cursor, origin, 1.7f);
  ImVec2 after = view.to_world(cursor, origin);
  EXPECT_NEAR(before.x, after.x, 1e-3);
  EXPECT_NEAR(before.y, after.y, 1e-3);
  view.frame(ImVec2(0, 0), ImVec2(1000, 500), ImVec2(800, 600), 40);
  ImVec2 a = view.to_screen(ImVec2(0, 0), ImVec2(0, 0)), b = view.to_screen(ImVec2(1000, 500), ImVec2(0, 0));
  EXPECT_GE(a.x, 39.0f);
  EXPECT_LE(b.x, 761.0f);
  EXPECT_NEAR((a.y + b.y) / 2, 300, 1e-3);
}

TEST(CanvasView, CentreOnPutsTheWorldPointInTheMiddleAtTheSameZoom) {
  CanvasView view;
  view.zoom = 0.5f;
  view.centre_on(ImVec2(900, -40), ImVec2(800, 600));
  const ImVec2 at = view.to_screen(ImVec2(900, -40), ImVec2(0, 0));
  EXPECT_NEAR(at.x, 400, 1e-3);
  EXPECT_NEAR(at.y, 300, 1e-3);
  EXPECT_FLOAT_EQ(view.zoom, 0.5f);
}

}  // namespace
}  // namespace rlwb::ui
